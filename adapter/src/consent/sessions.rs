//! Where an MCP session's start and end reach consent mode.
//!
//! A session becomes live for consent mode when rmcp creates it
//! ([`Sessions`]), and never again once it ended. Two ways a session ends:
//! the client's `DELETE` (rmcp's `close_session`), which [`Sessions`] sees at
//! once, and anything else that stops the session's handler (idle timeout,
//! lost connection, shutdown), which the handler's [`SessionGuard`] sees when
//! it is dropped. Either way the session's states and token go.

use std::sync::{Arc, OnceLock};

use futures::Stream;
use rmcp::transport::{
    WorkerTransport,
    streamable_http_server::{
        RestoreOutcome, SessionId, SessionManager,
        session::{
            ServerSseMessage,
            local::{LocalSessionManager, LocalSessionManagerError, LocalSessionWorker},
        },
    },
};

use super::Consent;
use crate::edges::{Edge, Edges};

/// rmcp's local session manager, telling consent mode about created and closed sessions.
#[derive(Debug, Default)]
pub struct Sessions {
    inner: LocalSessionManager,
    consent: Option<Arc<Consent>>,
}

impl Sessions {
    /// Sessions that begin and end consent state in `consent` (if consent mode is on).
    pub fn new(consent: Option<Arc<Consent>>) -> Self {
        Self {
            inner: LocalSessionManager::default(),
            consent,
        }
    }
}

type Message = rmcp::model::ClientJsonRpcMessage;

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        if let Some(consent) = &self.consent {
            consent.begin_session(&id);
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: Message,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(Edge::session_known(self.inner.has_session(id).await?))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(consent) = &self.consent {
            consent.end_session(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: Message,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: Message) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Only with a session store, which the adapter never configures. A
        // restored session would not be live for consent mode: its states and
        // token were in memory only.
        self.inner.restore_session(id).await
    }

    fn event_store(
        &self,
    ) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.inner.event_store()
    }
}

/// Shared by one session's handler clones; ends the session's consent state when the last goes.
#[derive(Debug, Default)]
pub struct SessionGuard {
    consent: Option<Arc<Consent>>,
    id: OnceLock<String>,
}

impl SessionGuard {
    /// A guard for a new session's handler.
    pub fn new(consent: Option<Arc<Consent>>) -> Self {
        Self {
            consent,
            id: OnceLock::new(),
        }
    }

    /// Records the session id the first time a call shows it.
    pub fn record(&self, id: &str) {
        let _ = self.id.set(id.to_owned());
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let (Some(consent), Some(id)) = (&self.consent, self.id.get()) {
            consent.end_session(id);
        }
    }
}
