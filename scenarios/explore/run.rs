//! Family 20, running a sequence (issue #29): the Core's side of the
//! explorer. Each operation is sent the way its actor sends it (alice's
//! forms, lab-bot's native calls, the setup surface), its answer put in the
//! words of the model's [`Answer`], then what it touched is read back
//! (`reads.rs`); two operations of a pair are in flight at once.

use std::collections::BTreeMap;

use grantgate_engine::prelude::*;

use super::model::{Aimed, Answer, Extensions, Model, Move, Op};
use crate::support::flows::{LAB, LAB_BOT};
use crate::support::forms::accepted;

/// Where moved Issues go: alice's repository, which lab-bot cannot see.
pub const ARCHIVE_NAME: &str = "archive";
const ARCHIVE: &str = "alice/archive";

/// A sequence's difference from the model: its numbered steps up to it,
/// what differed, and how many operations ran.
pub struct Difference {
    pub steps: Vec<String>,
    pub what: String,
    pub operations: usize,
}

/// What one run of a sequence needs besides the model: alice's browser,
/// the extensions, a counter that keeps each run's texts apart, and the
/// highest Issue index of alice/lab any receipt named.
pub struct World {
    pub(crate) alice: Human,
    extensions: Extensions,
    run: usize,
    pub(crate) top: i64,
}

/// lab-bot's native line, with the token of its own it holds when the Core
/// can delete tokens.
pub(crate) struct Agent {
    pub(crate) native: NativeClient,
    token: Option<BotToken>,
}

/// The Core's side of one model grant.
pub(crate) struct Live {
    pub(crate) grant: GrantRef,
    proposal: Proposal,
    pub(crate) keys: Vec<String>,
    pub(crate) issues: BTreeMap<u8, IssueRef>,
}

/// What the Core answered one operation, and the receipt's Issue if any.
struct Sent {
    said: String,
    receipt: Option<(usize, u8, IssueRef)>,
}

impl Sent {
    fn said(said: impl Into<String>) -> Sent {
        Sent {
            said: said.into(),
            receipt: None,
        }
    }
}

/// The title of text variant `text` under key slot `key`.
pub(crate) fn title(key: u8, text: u8) -> String {
    format!("explored key {key} text {text}")
}

/// The body of text variant `text` under key slot `key`.
pub(crate) fn body(key: u8, text: u8) -> String {
    format!("text variant {text} of key {key}\n")
}

impl World {
    /// A world for alice's signed-in browser and the Core's extensions.
    pub fn new(alice: Human, extensions: Extensions) -> World {
        World {
            alice,
            extensions,
            run: 0,
            top: 0,
        }
    }

    /// Runs `moves` from a fresh model on fresh grants; `Ok(Err(d))` is a
    /// difference from the model, `Err` a broken step (an unreadable answer
    /// fails the trial as always). Each answer before the sequence's first
    /// pair is appended to `answered`: the backends' parity compares them,
    /// and which of a pair's two orders a Core took, and so every answer
    /// after it, may differ from run to run.
    pub async fn run(
        &mut self,
        ctx: &Ctx,
        moves: &[Move],
        answered: &mut Vec<(String, String)>,
    ) -> Step<Result<(), Difference>> {
        self.run += 1;
        // lab-bot can see alice/lab and holds a token at the start of every sequence.
        ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
        let mut bot = self.agent(ctx).await?;
        let mut model = Model::new(self.extensions);
        let mut live = Vec::<Live>::new();
        let mut steps = Vec::new();
        let (mut operations, mut raced) = (0, false);
        macro_rules! differ {
            ($($what:tt)*) => {
                return Ok(Err(Difference { steps, what: format!($($what)*), operations }))
            };
        }
        for (i, &mv) in moves.iter().enumerate() {
            let (first, second) = match mv {
                Move::One(op) => (model.aim(op), None),
                Move::Both(a, b) => (model.aim(a), Some(model.aim(b))),
            };
            let Some(b) = second else {
                steps.push(format!("{}. {}", i + 1, first.describe()));
                operations += 1;
                let expected = show(&model.step(&first));
                let got = self
                    .one(ctx, &mut bot, &first, &expected, &mut live)
                    .await?;
                if !raced {
                    answered.push((first.describe(), got.clone()));
                }
                if got != expected {
                    differ!("expected {expected}, got {got}");
                }
                // Nothing sent, nothing touched.
                let sent = expected != show(&Answer::Skip);
                if sent && let Err(what) = self.touched(ctx, &bot, &model, &live, &first).await? {
                    differ!("{what}");
                }
                continue;
            };
            // Two in flight at once: the model accepts the answers of
            // either serial order, and then holds the state of that order.
            let a = first;
            steps.push(format!(
                "{}. at once: {} and {}",
                i + 1,
                a.describe(),
                b.describe()
            ));
            operations += 2;
            let orders: Vec<(String, String, Model)> = [false, true]
                .into_iter()
                .map(|b_first| {
                    let mut m = model.clone();
                    let (ea, eb) = if b_first {
                        let eb = show(&m.step(&b));
                        (show(&m.step(&a)), eb)
                    } else {
                        let ea = show(&m.step(&a));
                        (ea, show(&m.step(&b)))
                    };
                    (ea, eb, m)
                })
                .collect();
            let (ea, eb) = (&orders[0].0, &orders[0].1);
            let sent = join_all([
                self.send(ctx, &bot, &live, &a, ea),
                self.send(ctx, &bot, &live, &b, eb),
            ])
            .await;
            let mut got = Vec::new();
            for s in sent {
                got.push(self.record(&mut live, s?));
            }
            raced = true;
            let fits: Vec<&Model> = (orders.iter())
                .filter(|(x, y, _)| *x == got[0] && *y == got[1])
                .map(|(_, _, m)| m)
                .collect();
            if fits.is_empty() {
                differ!(
                    "expected {} and {} (or, in the other order, {} and {}), got {} and {}",
                    orders[0].0,
                    orders[0].1,
                    orders[1].0,
                    orders[1].1,
                    got[0],
                    got[1]
                );
            }
            let mut why = String::new();
            let mut settled = None;
            for m in fits {
                match self.touched(ctx, &bot, m, &live, &a).await? {
                    Ok(()) => match self.touched(ctx, &bot, m, &live, &b).await? {
                        Ok(()) => {
                            settled = Some(m.clone());
                            break;
                        }
                        Err(w) => why = w,
                    },
                    Err(w) => why = w,
                }
            }
            match settled {
                Some(m) => model = m,
                None => differ!("{why}"),
            }
        }
        if let Err(what) = self.sweep(ctx, &bot, &model, &live).await? {
            steps.push("then everything is read back".into());
            differ!("{what}");
        }
        Ok(Ok(()))
    }

    /// A fresh line for lab-bot: a token of its own when the Core can
    /// delete tokens (so deleting it leaves the fixture's alone).
    async fn agent(&self, ctx: &Ctx) -> Step<Agent> {
        if !self.extensions.token_delete {
            return Ok(Agent {
                native: ctx.native(LAB_BOT)?,
                token: None,
            });
        }
        let token = ctx.tokens().mint_bot_token(LAB_BOT).await?;
        Ok(Agent {
            native: ctx.native_with_token(&token)?,
            token: Some(token),
        })
    }

    /// Sends one operation alone; preparation and token changes change the
    /// world, the rest is [`send`](Self::send) and
    /// [`record`](Self::record).
    async fn one(
        &mut self,
        ctx: &Ctx,
        bot: &mut Agent,
        a: &Aimed,
        expected: &str,
        live: &mut Vec<Live>,
    ) -> Step<String> {
        if expected == show(&Answer::Skip) {
            return Ok(expected.to_owned());
        }
        match a.op {
            Op::Prepare => {
                let task = format!("explore run {} grant {}", self.run, live.len());
                let (grant, page) = self.alice.prepare_grant(LAB, LAB_BOT, &task, "s").await?;
                let proposal = ctx
                    .native(LAB_BOT)?
                    .get_grant(&grant)
                    .await?
                    .grant()?
                    .proposal;
                live.push(Live {
                    grant,
                    proposal,
                    keys: (0..2).map(|_| NewIssue::new("", "").request_key).collect(),
                    issues: BTreeMap::new(),
                });
                Ok(form_answer(&page))
            }
            Op::DeleteToken => {
                if let Some(token) = &bot.token {
                    ctx.tokens().delete_bot_token(token).await?;
                }
                Ok(show(&Answer::Accepted))
            }
            Op::MintToken => {
                *bot = self.agent(ctx).await?;
                Ok(show(&Answer::Accepted))
            }
            _ => {
                let sent = self.send(ctx, bot, live, a, expected).await?;
                Ok(self.record(live, sent))
            }
        }
    }

    /// Sends `a` to the Core and says what came back, in the words of
    /// [`show`]. Changes nothing here, so two can be in flight at once.
    async fn send(
        &self,
        ctx: &Ctx,
        bot: &Agent,
        live: &[Live],
        a: &Aimed,
        expected: &str,
    ) -> Step<Sent> {
        let native = &bot.native;
        let (Some(t), false) = (a.grant, expected == show(&Answer::Skip)) else {
            return Ok(match a.op {
                Op::List => Sent::said(list(native, live).await?),
                Op::RemoveAgent => {
                    ctx.setup().remove_collaborator(LAB, LAB_BOT).await?;
                    Sent::said(show(&Answer::Accepted))
                }
                Op::RestoreAgent => {
                    ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
                    Sent::said(show(&Answer::Accepted))
                }
                _ => Sent::said(show(&Answer::Skip)),
            });
        };
        let l = &live[t];
        let index = a.key().and_then(|k| l.issues.get(&k));
        let answer = match a.op {
            Op::Confirm(_) => native.confirm(&l.grant, &l.proposal).await?,
            Op::Approve { .. } | Op::Withdraw { .. } => {
                let decision = match a.op {
                    Op::Approve { .. } => Decision::Approve,
                    _ => Decision::Withdraw,
                };
                let path = core_api::grant_page(&l.grant);
                // A revoked grant's page may hold no form: the new-grant
                // page's `_csrf` is the session's too (S4.csrf.any-form).
                let csrf = (self.alice)
                    .session_csrf(&[&path, &core_api::new_grant_page(LAB)])
                    .await?;
                let form = Form::new(
                    "POST",
                    self.alice.url(&core_api::decision(&l.grant, decision))?,
                    vec![
                        (fields::CSRF.into(), csrf),
                        (fields::STATE_REVISION.into(), a.revision.to_string()),
                    ],
                );
                return Ok(Sent::said(form_answer(&self.alice.submit(&form).await?)));
            }
            Op::Submit { key, text, .. } => {
                let issue = NewIssue {
                    request_key: l.keys[key as usize].clone(),
                    title: title(key, text),
                    body: body(key, text),
                };
                native.submit(&l.grant, &l.proposal, &issue).await?
            }
            Op::Readback { key, .. } => native.submission(&l.grant, &l.keys[key as usize]).await?,
            Op::EditIssue { key, .. } | Op::MoveIssue { key, .. } | Op::DeleteIssue { key, .. } => {
                // The model has a submission the Core never gave a receipt for.
                let Some(issue) = index else {
                    return Ok(Sent::said("no Issue index known"));
                };
                let answer = match a.op {
                    Op::EditIssue { .. } => {
                        let (title, body) = (title(key, 2), body(key, 2));
                        (self.alice)
                            .edit_issue(LAB, issue.index, Some(&title), Some(&body))
                            .await?
                    }
                    Op::MoveIssue { .. } => ctx.setup().move_issue(issue.id, ARCHIVE).await?,
                    _ => ctx.setup().delete_issue(LAB, issue.index).await?,
                };
                return Ok(Sent::said(match answer.status {
                    200..300 => show(&Answer::Accepted),
                    other => format!("status {other}"),
                }));
            }
            _ => return Ok(Sent::said(show(&Answer::Skip))),
        };
        Ok(match (answer.status, a.key()) {
            (200 | 201, Some(key)) => {
                let receipt = answer.submitted()?.receipt;
                Sent {
                    said: format!("{} with receipt {}", answer.status, receipt.status),
                    receipt: Some((t, key, receipt.issue)),
                }
            }
            (status, _) => Sent::said(format!("status {status}")),
        })
    }

    /// Keeps a receipt's Issue: a receipt is historical, so a replay or
    /// readback names the Issue the first submission created
    /// (S3.receipt.historical).
    fn record(&mut self, live: &mut [Live], sent: Sent) -> String {
        let Some((t, key, issue)) = sent.receipt else {
            return sent.said;
        };
        self.top = self.top.max(issue.index);
        let first = live[t].issues.entry(key).or_insert(issue.clone());
        match first.id == issue.id && first.index == issue.index {
            true => sent.said,
            false => format!("{} naming another Issue", sent.said),
        }
    }
}

/// The list's answer: the sequence's grants in it, with their states.
pub(crate) async fn list(native: &NativeClient, live: &[Live]) -> Step<String> {
    let mut listed = Vec::new();
    // Pages of 50 until one is short; bounded, whatever the Core says.
    for page in 1..=20 {
        let answer = native
            .list_grants(&format!("state=all&limit=50&page={page}"))
            .await?;
        if answer.status != 200 {
            return Ok(format!("status {}", answer.status));
        }
        let grants = answer.grants()?;
        for g in &grants {
            if let Some(i) = live.iter().position(|l| l.grant.id == g.id) {
                listed.push((i, g.state.clone()));
            }
        }
        if grants.len() < 50 {
            break;
        }
    }
    listed.sort();
    Ok(format!("listed {}", json_text(&listed)))
}

/// A form POST's answer: accepted, or its status.
fn form_answer(page: &Page) -> String {
    if accepted(page) {
        show(&Answer::Accepted)
    } else {
        format!("status {}", page.status)
    }
}

/// An answer in words, the same for the model's and the Core's.
pub(crate) fn show(answer: &Answer) -> String {
    match answer {
        Answer::Status(s) => format!("status {s}"),
        Answer::Accepted => "accepted".into(),
        Answer::Receipt(s, status) => format!("{s} with receipt {status}"),
        Answer::Listed(grants) => format!("listed {}", json_text(grants)),
        Answer::Skip => "not sent".into(),
    }
}
