//! The applications the consent grammars register, and an authorize
//! request as its parameters: what `oauth.rs` and `token.rs` share.

use grantgate_engine::prelude::*;

/// Redirect URIs the harness registers and never follows (nothing listens
/// on them). Letters in host and path let a case change show.
pub(crate) const R1: &str = "http://grantgate.example/oauth/cb";
/// A second URI of the same application.
pub(crate) const R2: &str = "http://grantgate.example/oauth/cb2";
/// The URI of another application.
pub(crate) const RB: &str = "http://grantgate.example/other/cb";

/// The scopes a consent asks for by default.
pub(crate) const FULL_SCOPE: &str = "read:repository write:issue";

/// The two applications every table uses: A with [`R1`] and [`R2`], B with
/// [`RB`]; their client ids.
pub(crate) async fn two_clients(ctx: &Ctx) -> Step<(String, String)> {
    let a = ctx.consent().oauth_app(&[R1.to_owned(), R2.to_owned()]).await?;
    let b = ctx.consent().oauth_app(&[RB.to_owned()]).await?;
    Ok((a, b))
}

/// An authorize request as its parameters, in order (`None`: left out).
#[derive(Clone)]
pub(crate) struct Request(pub(crate) Vec<(&'static str, Option<String>)>);

impl Request {
    /// The right request of `client` for `redirect_uri`, with `challenge`.
    pub(crate) fn new(client: &str, redirect_uri: &str, challenge: &str, state: &str) -> Self {
        Request(vec![
            ("response_type", Some("code".into())),
            ("client_id", Some(client.into())),
            ("redirect_uri", Some(redirect_uri.into())),
            ("state", Some(state.into())),
            ("code_challenge", Some(challenge.into())),
            ("code_challenge_method", Some("S256".into())),
            ("scope", Some(FULL_SCOPE.into())),
        ])
    }

    /// The same request with `name` set to `value` (`None` leaves it out).
    pub(crate) fn with(&self, name: &str, value: Option<&str>) -> Self {
        let mut next = self.clone();
        for (n, v) in &mut next.0 {
            if *n == name {
                *v = value.map(str::to_owned);
            }
        }
        next
    }

    /// The authorize URL on the Core.
    pub(crate) fn url(&self, core: &str) -> Step<Url> {
        let mut url: Url = format!("{core}{}", oauth::AUTHORIZE)
            .parse()
            .map_err(|e| Abort::errored(format!("authorize URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            for (name, value) in &self.0 {
                if let Some(v) = value {
                    q.append_pair(name, v);
                }
            }
        }
        Ok(url)
    }
}
