//! Every error refcore can produce, and how each becomes an HTTP answer.
//!
//! API handlers return [`AppError`], rendered as the stable JSON body
//! `{"message", "url"}`; browser handlers return [`PageError`], the same
//! classification rendered as an HTML page. Internal causes are logged to
//! stderr and never reach a client.

use std::sync::OnceLock;

use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, PRAGMA};
use axum::response::{IntoResponse, Response};

/// A configuration problem found at start-up; the message names the variable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is absent.
    #[error("{0} is not set")]
    Missing(&'static str),
    /// A variable is present but unusable.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What is wrong with it (never its value: it may be a secret).
        reason: &'static str,
    },
}

impl ConfigError {
    pub(crate) fn invalid(name: &'static str, reason: &'static str) -> Self {
        ConfigError::Invalid { name, reason }
    }
}

/// Start-up failures of the server itself.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Bad `CORE_*` environment.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Connecting to or preparing the database failed.
    #[error("database {backend}: {source}")]
    Database {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// Running the embedded migrations failed.
    #[error("migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Binding the listen address failed.
    #[error("listen on {addr}: {source}")]
    Bind {
        /// The address from `CORE_LISTEN`.
        addr: std::net::SocketAddr,
        /// The socket error.
        source: std::io::Error,
    },
    /// Creating the first site admin failed.
    #[error("creating the site admin: {0}")]
    Admin(String),
}

/// Why `CORE_FAULT` stops the start (see [`crate::faults`]).
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// A default build has no faults, so a set `CORE_FAULT` would mislead.
    #[error(
        "CORE_FAULT is set but this refcore was built without the `faults` feature, so no fault \
         can be active; unset CORE_FAULT or use a faults build (docs/faults.md)"
    )]
    NotAFaultsBuild,
    /// The name is not in the catalogue of faults.
    #[error("CORE_FAULT={name:?} names no built-in fault; valid names: {valid}")]
    Unknown {
        /// The name given (cut to 60 characters).
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
}

/// Why `CORE_VARIANT` stops the start (see [`crate::variants`]).
#[derive(Debug, thiserror::Error)]
pub enum VariantError {
    /// A default build has no variants, so a set `CORE_VARIANT` would mislead.
    #[error(
        "CORE_VARIANT is set but this refcore was built without the `faults` feature, so no \
         variant can be active; unset CORE_VARIANT or use a faults build (docs/faults.md)"
    )]
    NotAFaultsBuild,
    /// The name is not in the list of variants.
    #[error("CORE_VARIANT={name:?} names no honest variant; valid names: {valid}")]
    Unknown {
        /// The name given (cut to 60 characters).
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
    /// Two variants of the list cannot share a Core.
    #[error("CORE_VARIANT names {first} and {second}, which conflict: {why}; run them apart")]
    Conflict {
        /// The variant named first.
        first: String,
        /// The variant named later that conflicts with it.
        second: String,
        /// Why they conflict (the catalogue's reason).
        why: String,
    },
    /// One process is either a fault or a variant, never both.
    #[error("CORE_FAULT and CORE_VARIANT are both set; one refcore runs at most one of them")]
    WithFault,
}

/// The classification of a failed request, shared by API and browser.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// 400: malformed JSON, form, query or body encoding.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no credential or a bad one.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the credential lacks a scope, or the user lacks permission.
    #[error("{0}")]
    Forbidden(String),
    /// 404: absent or invisible to this caller.
    #[error("not found")]
    NotFound,
    /// 405: the route exists with other methods.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 409: state, proposal or request-key conflict.
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is larger than the transport limit.
    #[error("request body too large")]
    PayloadTooLarge,
    /// 422: well-formed but invalid value, unknown field or wrong type.
    #[error("{0}")]
    Unprocessable(String),
    /// 500: a bug or an unavailable database; the cause is only logged.
    #[error("internal error")]
    Internal(String),
    /// 400 from the OAuth token endpoint, rendered as RFC 6749 §5.2 asks:
    /// `{"error", "error_description"}`, never cached.
    #[error("{description}")]
    OAuth {
        /// The RFC 6749 error code, e.g. `invalid_grant`.
        error: &'static str,
        /// A fixed, secret-free explanation.
        description: &'static str,
    },
}

impl AppError {
    /// The status code this error answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) | AppError::OAuth { .. } => StatusCode::BAD_REQUEST,
            AppError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::NotFound => StatusCode::NOT_FOUND,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Shorthand for a 400.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        AppError::BadRequest(msg.into())
    }

    /// Shorthand for a 422.
    pub fn invalid(msg: impl Into<String>) -> Self {
        AppError::Unprocessable(msg.into())
    }

    /// Shorthand for a 409.
    pub fn conflict(msg: impl Into<String>) -> Self {
        AppError::Conflict(msg.into())
    }

    /// Shorthand for a 403.
    pub fn forbidden(msg: impl Into<String>) -> Self {
        AppError::Forbidden(msg.into())
    }

    fn log_internal(&self) {
        if let AppError::Internal(cause) = self {
            tracing::error!(cause = %cause, "internal error");
        }
    }
}

impl From<sqlx::Error> for AppError {
    fn from(err: sqlx::Error) -> Self {
        AppError::Internal(format!("database: {err}"))
    }
}

static DOCS_URL: OnceLock<String> = OnceLock::new();

/// Sets the `url` every JSON error points to (the OpenAPI document).
pub fn set_docs_url(url: String) {
    let _ = DOCS_URL.set(url);
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        self.log_internal();
        if let AppError::OAuth { error, description } = self {
            let body = serde_json::json!({ "error": error, "error_description": description });
            return (
                StatusCode::BAD_REQUEST,
                [(CACHE_CONTROL, "no-store"), (PRAGMA, "no-cache")],
                axum::Json(body),
            )
                .into_response();
        }
        let url = DOCS_URL.get().cloned().unwrap_or_default();
        let body = serde_json::json!({ "message": self.to_string(), "url": url });
        (self.status(), axum::Json(body)).into_response()
    }
}

/// The browser flavour of [`AppError`]: same status, rendered as HTML.
#[derive(Debug)]
pub struct PageError(pub AppError);

impl From<AppError> for PageError {
    fn from(err: AppError) -> Self {
        PageError(err)
    }
}

impl From<sqlx::Error> for PageError {
    fn from(err: sqlx::Error) -> Self {
        PageError(err.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        self.0.log_internal();
        let status = self.0.status();
        let title = status.canonical_reason().unwrap_or("Error");
        let page = crate::web::html::page(
            title,
            None,
            &format!(
                "<h1 class=\"error\">{} {}</h1><p class=\"error-message\">{}</p>",
                status.as_u16(),
                crate::web::html::escape(title),
                crate::web::html::escape(&self.0.to_string())
            ),
        );
        (status, page).into_response()
    }
}
