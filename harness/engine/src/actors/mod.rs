//! The actors of a scenario: humans at browsers, bots behind their own
//! adapter, and the setup client that alone holds the admin credential.

pub mod bot;
pub mod consent;
pub mod http;
pub mod human;
pub mod links;
pub mod mcp_schema;
pub mod native;
pub mod page;
pub mod setup;
mod surface;

pub use bot::{Bot, PendingCall, ToolReply};
pub use consent::{ConsentRedirect, ConsentToken, ConsentUrl, Elicitation, TokenPost};
pub use http::Answer;
pub use human::Human;
pub use links::Links;
pub use native::NativeClient;
pub use page::{Form, Page};
pub use setup::SetupClient;
