//! The "nothing changed" witness of a refused form: the watched grants'
//! state and revision, the repository's Issues and the agent's grant count,
//! read through the APIs only.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Ledger, Watch};

/// What a refused form must leave as it was, read through the APIs: the
/// watched grants' state and revision, the repository's Issues, and how many
/// grants the agent has in any state.
pub(crate) struct Unchanged {
    watch: Watch,
    ledger: Ledger,
    grants: i64,
}

impl Unchanged {
    /// Takes the witness now, watching `grant`.
    pub(crate) async fn take(ctx: &Ctx, grant: &GrantRef) -> Step<Unchanged> {
        Unchanged::watching(ctx, &[grant]).await
    }

    /// Takes the witness now, watching every one of `grants`.
    pub(crate) async fn watching(ctx: &Ctx, grants: &[&GrantRef]) -> Step<Unchanged> {
        let watch = grants
            .iter()
            .fold(Watch::new(LAB_BOT, LAB), |w, g| w.grant(g));
        let ledger = watch.take(ctx).await?;
        let grants = flows::grant_total(ctx, LAB_BOT).await?;
        Ok(Unchanged {
            watch,
            ledger,
            grants,
        })
    }

    /// Checks that nothing changed since the witness was taken.
    pub(crate) async fn expect(&self, ctx: &Ctx, what: &str) -> Step<()> {
        self.watch.expect_unchanged(ctx, what, &self.ledger).await?;
        ctx.expect_eq(
            &format!("{what}: no grant was prepared"),
            flows::grant_total(ctx, LAB_BOT).await?,
            self.grants,
        )
    }
}

/// Checks that the grant is `(state, revision)` as lab-bot reads it natively.
pub(crate) async fn expect_grant(
    ctx: &Ctx,
    what: &str,
    grant: &GrantRef,
    state: &str,
    revision: i64,
) -> Step<()> {
    let (now, rev) = flows::native_status(ctx, LAB_BOT, grant).await?;
    ctx.expect_eq(
        &format!("{what}: the grant's state and revision"),
        (now.as_str(), rev),
        (state, revision),
    )
}
