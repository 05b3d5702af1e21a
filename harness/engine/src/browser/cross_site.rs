//! A page on another site than the Core's, for what a browser does when a
//! site it does not trust sends it to the Core.

use crate::vocab::{Abort, Step};

/// A page on another site than the Core's, served by the harness while the
/// value lives: the Core's host is `127.0.0.1` or `localhost`, this page is
/// on the other one, which a browser counts as another site.
pub struct CrossSite {
    /// The page's URL.
    pub url: url::Url,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for CrossSite {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl CrossSite {
    /// Serves `html` at `/` of a site other than `core`'s.
    pub async fn serve(core: &url::Url, html: String) -> Step<CrossSite> {
        let host = match core.host_str() {
            Some("localhost") => "127.0.0.1",
            Some("127.0.0.1") => "localhost",
            other => {
                return Err(Abort::errored(format!(
                    "a cross-site page needs a Core on 127.0.0.1 or localhost, not {other:?}"
                )));
            }
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| Abort::errored(format!("cross-site page: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Abort::errored(format!("cross-site page: {e}")))?
            .port();
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(move || {
                let html = html.clone();
                async move { axum::response::Html(html) }
            }),
        );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let url = format!("http://{host}:{port}/")
            .parse()
            .map_err(|e| Abort::errored(format!("cross-site url: {e}")))?;
        Ok(CrossSite { url, server })
    }
}

/// `text` escaped for an HTML attribute value in double quotes.
pub fn attr_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
