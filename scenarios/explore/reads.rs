//! Family 20, reading back (issue #29): after an operation, what it
//! touched — the grant as lab-bot reads it, the key's receipt and Issue, no
//! Issue past the last receipt's — and at the end of a sequence everything
//! the model knows, in the words the model's views use.

use grantgate_engine::prelude::*;

use super::model::{Aimed, Model, Op, State, grant_words};
use super::run::{Agent, Live, World, body, list, show, title};
use crate::support::flows::LAB;

impl World {
    /// What `a` touched reads as `model` says: its grant as lab-bot reads
    /// it and its state on alice's grant page, its key's receipt and Issue, and no Issue past the last one a
    /// receipt named (nothing written by a replay or a refusal).
    pub(crate) async fn touched(
        &self,
        ctx: &Ctx,
        bot: &Agent,
        model: &Model,
        live: &[Live],
        a: &Aimed,
    ) -> Step<Result<(), String>> {
        // What lab-bot cannot read now reads as the refusal its own
        // operation already got.
        let Some(t) = a.grant.filter(|_| model.refused().is_none()) else {
            return Ok(Ok(()));
        };
        let (want, seen) = (
            model.grant_view(t),
            grant_seen(&bot.native, &live[t]).await?,
        );
        if seen != want {
            return Ok(Err(format!(
                "grant {t} then reads {seen}, the model says {want}"
            )));
        }
        // And alice's grant page says that state as text (S4.page.text).
        let state = model.grants[t].state.name();
        let page = self.alice.grant_page(&live[t].grant).await?;
        if page.status != 200 || !page.shows(state) {
            return Ok(Err(format!(
                "grant {t}'s page then does not say {state} (status {})",
                page.status
            )));
        }
        if let Some(key) = a.key()
            && let Err(e) = self.submission(ctx, bot, model, live, t, key).await?
        {
            return Ok(Err(e));
        }
        // A submission writes one Issue at most, a replay or a refusal none
        // (S3.replay.identical, S3.submit.active, S10.blocked).
        let reached = model.grants[t].state == State::Active;
        if matches!(a.op, Op::Submit { .. }) && reached && self.top > 0 {
            let next = ctx.setup().issue(LAB, self.top + 1).await?.status;
            if next != 404 {
                return Ok(Err(format!(
                    "alice/lab then has an Issue past the last receipt's (status {next} at \
                     index {}): something was written",
                    self.top + 1
                )));
            }
        }
        Ok(Ok(()))
    }

    /// Key `key` of grant `t` reads back as the model says, and its Issue
    /// holds what the model says.
    async fn submission(
        &self,
        ctx: &Ctx,
        bot: &Agent,
        model: &Model,
        live: &[Live],
        t: usize,
        key: u8,
    ) -> Step<Result<(), String>> {
        let Some(want) = model.issue_view(t, key) else {
            return Ok(Ok(()));
        };
        let l = &live[t];
        let seen = issue_seen(ctx, l, key).await?;
        if seen != want {
            return Ok(Err(format!(
                "the Issue of key {key} of grant {t} then reads {seen}, the model says {want}"
            )));
        }
        let mut m = model.clone();
        let readback = Aimed {
            op: Op::Readback { grant: t, key },
            grant: Some(t),
            revision: 1,
        };
        let want = show(&m.step(&readback));
        let answer = bot
            .native
            .submission(&l.grant, &l.keys[key as usize])
            .await?;
        let seen = match answer.status {
            200 => format!("200 with receipt {}", answer.submitted()?.receipt.status),
            other => format!("status {other}"),
        };
        Ok(match seen == want {
            true => Ok(()),
            false => Err(format!(
                "key {key} of grant {t} then reads back {seen}, the model says {want}"
            )),
        })
    }

    /// At the end of a sequence, everything the model knows reads as it
    /// says: the list, every grant, every receipt and its Issue.
    pub(crate) async fn sweep(
        &self,
        ctx: &Ctx,
        bot: &Agent,
        model: &Model,
        live: &[Live],
    ) -> Step<Result<(), String>> {
        let want = show(&model.clone().step(&model.aim(Op::List)));
        let seen = list(&bot.native, live).await?;
        if seen != want {
            return Ok(Err(format!("the list reads {seen}, the model says {want}")));
        }
        for (t, g) in model.grants.iter().enumerate() {
            let (want, seen) = (
                model.grant_view(t),
                grant_seen(&bot.native, &live[t]).await?,
            );
            if seen != want {
                return Ok(Err(format!(
                    "grant {t} reads {seen}, the model says {want}"
                )));
            }
            for &key in g.subs.keys() {
                if let Err(e) = self.submission(ctx, bot, model, live, t, key).await? {
                    return Ok(Err(e));
                }
            }
        }
        Ok(Ok(()))
    }
}

/// A grant as lab-bot reads it, in the words of [`Model::grant_view`].
async fn grant_seen(native: &NativeClient, live: &Live) -> Step<String> {
    let answer = native.get_grant(&live.grant).await?;
    Ok(match answer.status {
        200 => {
            let g = answer.grant()?;
            let mut stamped: Vec<&str> = ["approved_at", "confirmed_at", "revoked_at"]
                .into_iter()
                .filter(|m| !g.raw[*m].is_null())
                .collect();
            stamped.sort_unstable();
            let approver = g
                .approved_by
                .as_ref()
                .map_or("nobody", |u| u.login.as_str());
            grant_words(&g.state, g.state_revision, &stamped, approver)
        }
        other => format!("status {other}"),
    })
}

/// The Issue of key `key` as the setup actor reads it at its index, in the
/// words of [`Model::issue_view`].
async fn issue_seen(ctx: &Ctx, live: &Live, key: u8) -> Step<String> {
    let Some(issue) = live.issues.get(&key) else {
        return Ok("no Issue index known".into());
    };
    let answer = ctx.setup().issue(LAB, issue.index).await?;
    if answer.status != 200 {
        return Ok(format!("status {}", answer.status));
    }
    let issue = answer.issue()?;
    let text = (0..3u8)
        .find(|&v| issue.title == title(key, v) && issue.body == body(key, v))
        .map_or_else(|| "another text".to_owned(), |v| format!("text {v}"));
    let marker = match &issue.agent_work_grant {
        Some(m) if m.grant_id == live.grant.id && m.request_key == live.keys[key as usize] => {
            format!("marked by key {key}")
        }
        Some(_) => "marked by another key".into(),
        None => "unmarked".into(),
    };
    Ok(format!("Issue with {text} {marker}"))
}
