//! Strict request decoding shared by the API and the browser surface.
//!
//! - JSON: the body must be UTF-8 JSON (400 otherwise); it is first parsed as
//!   a generic value so that syntax errors (400) stay apart from shape errors
//!   — unknown field, wrong type, missing member — (422); any NUL anywhere
//!   is 422 before a handler sees the value.
//! - Forms and queries: `application/x-www-form-urlencoded` decoded by hand,
//!   because the common decoders replace invalid UTF-8 instead of refusing it.
//! - Bodies above the transport limit ([`BODY_LIMIT`]) are 413.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

use crate::api::edges::{Edge, Edges};
use crate::error::{AppError, PageError};

/// Largest request body accepted on any route (413 above). 2 MiB so that
/// every valid request fits: a 262,144-byte body of control characters is
/// 1.5 MiB as JSON escapes, and a form with a maximal task and summary of
/// non-ASCII text is 1.5 MiB percent-encoded.
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The raw body of a JSON route; decode it with [`JsonBody::parse`] after
/// authentication, so a bad credential is 401 whatever the body holds.
#[derive(Debug)]
pub struct JsonBody {
    pub(crate) bytes: Bytes,
    json_content_type: bool,
}

/// Reads the body under the transport limit: 413 above it, 400 if reading
/// fails otherwise.
async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, AppError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::PayloadTooLarge
        } else {
            AppError::bad_request("could not read the request body")
        }
    })
}

/// Whether the request's media type (`Content-Type` without parameters) is
/// `expected`, compared case-insensitively.
pub fn content_type_is(headers: &HeaderMap, expected: &str) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(Edge::media_type)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(expected))
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        let json_content_type = content_type_is(req.headers(), "application/json");
        let bytes = read_body(req, state).await?;
        Ok(JsonBody {
            bytes,
            json_content_type,
        })
    }
}

impl JsonBody {
    /// Whether the request had no body at all.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Decodes the body as `T` (which should deny unknown fields).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, AppError> {
        if !self.json_content_type {
            return Err(AppError::bad_request(
                "Content-Type must be application/json",
            ));
        }
        let text = std::str::from_utf8(&self.bytes)
            .map_err(|_| AppError::bad_request("request body is not valid UTF-8"))?;
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            AppError::bad_request(format!("malformed JSON: {}", bounded(&e.to_string())))
        })?;
        // Every JSON body of the contract is an object; serde would also read
        // a struct from an array of its members in order.
        if !value.is_object() && Edge::json_body_is_object() {
            return Err(AppError::invalid("the request body must be a JSON object"));
        }
        if contains_nul(&value) && Edge::json_nul_refused() {
            return Err(AppError::invalid("text must not contain NUL"));
        }
        serde_json::from_value(value)
            .map_err(|e| AppError::invalid(format!("invalid request: {}", bounded(&e.to_string()))))
    }
}

/// Keeps messages short: serde errors can quote input.
fn bounded(message: &str) -> String {
    let mut out: String = message.chars().take(200).collect();
    if out.len() < message.len() {
        out.push('…');
    }
    out
}

fn contains_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(contains_nul),
        serde_json::Value::Object(map) => {
            map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v))
        }
        _ => false,
    }
}

/// Decodes `application/x-www-form-urlencoded` strictly: `+` is a space,
/// percent escapes must be well formed and the result valid UTF-8.
pub fn decode_urlencoded(raw: &[u8]) -> Result<Vec<(String, String)>, AppError> {
    let mut pairs = Vec::new();
    for part in raw.split(|&b| b == b'&') {
        if part.is_empty() {
            continue;
        }
        let (key, value) = match part.iter().position(|&b| b == b'=') {
            Some(i) => (&part[..i], &part[i + 1..]),
            None => (part, &part[part.len()..]),
        };
        pairs.push((decode_component(key)?, decode_component(value)?));
    }
    Ok(pairs)
}

fn decode_component(raw: &[u8]) -> Result<String, AppError> {
    for (i, &b) in raw.iter().enumerate() {
        if b == b'%' {
            let ok = raw.len() > i + 2
                && raw[i + 1].is_ascii_hexdigit()
                && raw[i + 2].is_ascii_hexdigit();
            if !ok {
                Edge::malformed_escape(raw, i);
                return Err(AppError::bad_request("malformed percent-encoding"));
            }
        }
    }
    String::from_utf8(Edge::decoded(raw))
        .map_err(|_| AppError::bad_request("form or query is not valid UTF-8"))
}

/// Decoded name/value pairs of a query string or form, with lookups that
/// refuse a repeated name (ambiguous input is 400, never a silent pick).
#[derive(Debug, Default)]
pub struct Params(Vec<(String, String)>);

impl Params {
    /// Decodes an `application/x-www-form-urlencoded` body.
    pub fn from_form(body: &[u8]) -> Result<Self, AppError> {
        Ok(Params(decode_urlencoded(body)?))
    }

    /// Decodes a raw query string (absent means empty).
    pub fn from_query(raw: Option<&str>) -> Result<Self, AppError> {
        Ok(Params(decode_urlencoded(raw.unwrap_or("").as_bytes())?))
    }

    /// The single value of `name`, if present.
    pub fn get(&self, name: &str) -> Result<Option<&str>, AppError> {
        let mut found = self.0.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, v)| v.as_str());
        if found.next().is_some() {
            return Err(AppError::bad_request(format!(
                "{name} given more than once"
            )));
        }
        Ok(first)
    }

    /// A positive integer parameter: 400 when present but not one.
    pub fn positive(&self, name: &str) -> Result<Option<i64>, AppError> {
        match self.get(name)? {
            None => Ok(None),
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 1 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(n)),
                _ => Edge::not_positive(name),
            },
        }
    }
}

/// A browser form body. Its rejections are HTML pages.
#[derive(Debug)]
pub struct FormBody(pub Params);

impl<S: Send + Sync> FromRequest<S> for FormBody {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &S) -> Result<Self, PageError> {
        let form = content_type_is(req.headers(), "application/x-www-form-urlencoded");
        let bytes = read_body(req, state).await?;
        if !form && !bytes.is_empty() {
            return Err(AppError::bad_request(
                "Content-Type must be application/x-www-form-urlencoded",
            )
            .into());
        }
        Ok(FormBody(Params(decode_urlencoded(&bytes)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlencoded_is_strict() {
        let pairs = decode_urlencoded(b"a=x+y%0D%0A&b=%C3%A9&c").unwrap();
        assert_eq!(pairs[0], ("a".into(), "x y\r\n".into()));
        assert_eq!(pairs[1], ("b".into(), "é".into()));
        assert_eq!(pairs[2], ("c".into(), "".into()));
        assert!(decode_urlencoded(b"a=%FF").is_err());
        assert!(decode_urlencoded(b"a=%G1").is_err());
        assert!(decode_urlencoded(b"a=%4").is_err());
    }

    #[test]
    fn params_refuse_bad_numbers_and_repeats() {
        let p = Params::from_query(Some("page=2&limit=x&state=a&state=b&z=0")).unwrap();
        assert_eq!(p.positive("page").unwrap(), Some(2));
        assert!(p.positive("limit").is_err());
        assert!(p.positive("z").is_err());
        assert!(p.get("state").is_err());
        assert_eq!(p.positive("absent").unwrap(), None);
        assert!(
            Params::from_query(Some("page=+1"))
                .unwrap()
                .positive("page")
                .is_err()
        );
    }
}

/// Path parameters for API routes: a segment that cannot be decoded names
/// nothing, so it is a JSON 404 rather than axum's plain-text rejection.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, AppError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|_| AppError::NotFound)
    }
}

/// Path parameters for browser routes; failures are HTML 404 pages.
#[derive(Debug)]
pub struct WebPath<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for WebPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = PageError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, PageError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| WebPath(p.0))
            .map_err(|_| PageError(AppError::NotFound))
    }
}

/// A numeric id or index in a path: a positive i64, else 404.
pub fn path_id(raw: &str) -> Result<i64, AppError> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AppError::NotFound);
    }
    match raw.parse::<i64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(AppError::NotFound),
    }
}
