//! What several families share: the flows a scenario starts from, the
//! witnesses of "nothing changed", tables of the contract, a human's forms,
//! a bot behind the fault proxy, delegated consent, the grant list and
//! envelopes. A family imports these and the engine prelude, never another
//! family.

pub(crate) mod consent;
pub(crate) mod envelopes;
pub(crate) mod flows;
pub(crate) mod forms;
pub(crate) mod grant_list;
pub(crate) mod proxied;
pub(crate) mod tables;
pub(crate) mod witnesses;
