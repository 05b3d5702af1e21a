//! refcore's faults (`CORE_FAULT`), in the order `refcore --list-faults`
//! prints them. `on` names the one backend a backend-specific fault is
//! active on: the NUL faults model a check that only ran where the other
//! backend would have failed anyway (SQLite stores NUL in text, PostgreSQL
//! errs on it). `browser` marks a fault only a real browser shows.

use crate::catalogue;

catalogue! {
    PaginationOffByOne = "pagination-off-by-one" {
        breaks: r#"the grant list treats `page` as 0-based: page 1 holds items 31.., page 2 is empty (§3 List)"#,
        catches: r#"2: page 1 has 30, page 2 has 1, in `list_31_pending_30_plus_1`"#,
    },
    LinkMissing = "link-missing" {
        breaks: r#"paged lists send no `Link` header (§3 List)"#,
        catches: r#"2: `Link` present and agreeing with the totals, read natively, in `list_31_pending_30_plus_1`"#,
    },
    LinkWrong = "link-wrong" {
        breaks: r#"`Link`'s `last` rounds down: with 31 grants at 30, page 1 has no `next` and `last` is page 1 (§3 List)"#,
        catches: r#"2: totals and `Link` agree (the adapter also refuses the contradiction), in `list_31_pending_30_plus_1`"#,
    },
    LinkLastOvercounts = "link-last-overcounts" {
        breaks: r#"`Link`'s `last` rounds up by `limit + 1`: right at 31 grants per 30, one page too far at 31 per 4 (§3 List; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"2: `list_31_pending_30_plus_1` (the 31 grants 4 per page: `last` 8)"#,
    },
    LinkLastPastFullPage = "link-last-past-full-page" {
        breaks: r#"`Link`'s `last` rounds up by `limit`: one page too far (and a `next` to an empty page) whenever the total fills its pages exactly (§3 List; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"2: `list_31_pending_30_plus_1` (the 31 grants 31 per page: no `next`)"#,
    },
    ShortEscapeDropsConnection = "short-escape-drops-connection" {
        breaks: r#"a query or form value ending in `%` or `%` and one hex digit makes the handler panic: the connection closes with no answer (§3 statuses; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"2: `number_grammar` (the list queried with `page=%`: no answer)"#,
    },
    ClampWithoutContinuation = "clamp-without-continuation" {
        breaks: r#"a clamped grant list builds `Link` from the requested `limit`: `limit=100` over 51+ grants gives 50 items and no `next` (§3 List)"#,
        catches: r#"2: clamped limits still continue — needs more than 50 grants, or a check that `Link` carries the effective `limit`, in `list_clamped_width_continues`"#,
    },
    TotalCountWrong = "total-count-wrong" {
        breaks: r#"the grant list's `X-Total-Count` is the length of this page (§3 List)"#,
        catches: r#"2: totals agree (31, not 30), in `list_31_pending_30_plus_1`"#,
    },
    ReplayAnswers201 = "replay-answers-201" {
        breaks: r#"an identical replay answers 201 (still no new Issue) (§3 Replay)"#,
        catches: r#"4: same key + same payload → 200, in `replay_same_payload_one_issue`"#,
    },
    ReplayCreatesSecondIssue = "replay-creates-second-issue" {
        breaks: r#"an identical replay creates another attributed Issue, still answering 200 with the stored receipt (§3 Replay)"#,
        catches: r#"4: one Issue (count the repository's Issues), in `replay_same_payload_one_issue`"#,
    },
    ReplayKeyedByPayload = "replay-keyed-by-payload" {
        breaks: r#"a new request key whose title and body equal an earlier submission's on the same grant answers that earlier receipt with 200 instead of making a new Issue: replay decided by payload, not by key (§3 Replay)"#,
        catches: r#"4: distinct keys → distinct Issues even with equal text, in `replay_distinct_keys_distinct_issues`"#,
    },
    ChangedPayloadAccepted = "changed-payload-accepted" {
        breaks: r#"same key with a changed title or body answers 200 with the stored receipt instead of 409 (§3 Replay)"#,
        catches: r#"4: changed payload → 409, in `replay_changed_title_conflict`"#,
    },
    DeletedIssueFreesKey = "deleted-issue-frees-key" {
        breaks: r#"deleting an Issue deletes its receipt: readback 404, and a replay makes a new Issue with 201 (§3 Submission)"#,
        catches: r#"5: key stays spent, readback says `issue_deleted`, in `deleted_issue_leaves_a_tombstone`"#,
    },
    RevokedGrantAcceptsSubmit = "revoked-grant-accepts-submit" {
        breaks: r#"submit accepts a `revoked` grant (§3 Submit, After withdrawal)"#,
        catches: r#"6: withdrawal blocks submit (natively 201; through the adapter `delivery_uncertain`, as the answer's grant is not active), in `withdrawn_while_awaiting_agent`"#,
    },
    WrongBotSeesGrant = "wrong-bot-sees-grant" {
        breaks: r#"grant routes serve any user who can read the repository, not only the agent (§3 "for the grant's agent only")"#,
        catches: r#"7: wrong bot gets 404, in `wrong_bot_gets_not_found`"#,
    },
    ScopeUnchecked = "scope-unchecked" {
        breaks: r#"confirm and submit need only `read:repository`, not `write:issue` (§3 table)"#,
        catches: r#"7: missing scope → 403; 8: scope reduced mid-flow, in `missing_scope_is_forbidden`"#,
    },
    CsrfUnchecked = "csrf-unchecked" {
        breaks: r#"browser POSTs skip the `_csrf` check (§4)"#,
        catches: r#"1: missing `_csrf` refused, in `csrf_missing_refused`"#,
    },
    CsrfNotSessionBound = "csrf-not-session-bound" {
        breaks: r#"`_csrf` tokens verify in any session (the MAC leaves the session out) (§4)"#,
        catches: r#"1: a **foreign** token — one issued to another live session — refused, in `csrf_foreign_refused`"#,
    },
    StaleRevisionAccepted = "stale-revision-accepted" {
        breaks: r#"approve/withdraw apply whatever `state_revision` the form carried (§4)"#,
        catches: r#"1: stale `state_revision` refused — the stale form must still be allowed in the current state (e.g. withdraw loaded at `awaiting_agent`, posted after the bot confirmed); a stale approve after a withdraw is 409 from the state check anyway, in `stale_revision_refused`"#,
    },
    DigestNotBoundToTask = "digest-not-bound-to-task" {
        breaks: r#"the proposal digest leaves the task out of the JCS object (§2)"#,
        catches: r#"3: the triple's digest equals SHA-256 of the JCS of the seven members, recomputed by the harness, in `full_lifecycle`"#,
    },
    AttributionOnOrdinaryIssues = "attribution-on-ordinary-issues" {
        breaks: r#"an ordinary Issue created by a bot that holds an active grant in that repository gets that grant's `agent_work_grant` marker (§1 Issue)"#,
        catches: r#"7: unassigned ordinary activity — the bot must hold an active grant there — has `agent_work_grant: null` and no "via agent work grant" on its page, in `ordinary_issue_is_unattributed`"#,
    },
    AccessLossIgnored = "access-loss-ignored" {
        breaks: r#"grant routes skip the bot's current permission on the repository (assume write) (§3 "Every call rechecks", After access loss)"#,
        catches: r#"8: collaborator removed → get/confirm/submit denied, nothing written, in `collaborator_removed_mid_flow`"#,
    },
    ListShowsInvisibleGrants = "list-shows-invisible-grants" {
        breaks: r#"the grant list skips the can-still-read filter (§3 List, After access loss)"#,
        catches: r#"8: omitted from the list, in `collaborator_removed_mid_flow`"#,
    },
    NulAcceptedOnSqlite = "nul-accepted-on-sqlite" {
        on: Sqlite,
        breaks: r#"NUL passes validation when the backend is SQLite, which stores it (201, NUL read back); PostgreSQL still answers 422 (§2 "NUL is refused with 422 on every backend")"#,
        catches: r#"3, 11: `nul_refused_on_every_backend` (NUL → 422 on SQLite), and the parity of a scenario that submits NUL"#,
    },
    BasicNulReachesDatabase = "basic-nul-reaches-database" {
        on: Postgres,
        breaks: r#"a Basic login with NUL is looked up in the database; PostgreSQL refuses NUL in text, so the answer is 500, not 401 (§1 token forms, §3 statuses; PostgreSQL only; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"2: `credential_grammar` (Basic login with NUL: 401)"#,
    },
    ClientIdNulReachesDatabase = "client-id-nul-reaches-database" {
        on: Postgres,
        breaks: r#"an authorize `client_id` with NUL is looked up in the database; PostgreSQL refuses NUL in text, so the answer is 500, not a 400 page (§9 "an unknown client … a 400 page", §2 NUL; PostgreSQL only; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"19: `authorize_grammar` (a client_id with NUL → 400 page, no redirect; `consent_decision_grammar` posts one in the consent form too, and `token_grammar` at the token endpoint, where refcore never looks the id up)"#,
    },
    ApproveKeepsState = "approve-keeps-state" {
        breaks: r#"the approve form answers as usual (303 to the grant page) but the grant stays `awaiting_human`: the update is skipped (§4 approve: `awaiting_human` → `active`)"#,
        catches: r#"1: `browser_forms_prepare_approve_withdraw` (approved grant is `active`, revision 3); 3: `full_lifecycle` (the bot sees it active)"#,
    },
    PagesAcceptApiTokens = "pages-accept-api-tokens" {
        breaks: r#"browser pages (grant page, approve, withdraw) take an API `Authorization` (token, Bearer, Basic) as a sign-in, bots included, and skip `_csrf` for such requests (§4 "A bot's credential never reaches these pages")"#,
        catches: r#"1: `bot_token_cannot_drive_browser` (lab-bot made repo admin; its token must not open the grant page)"#,
    },
    StateFilterIgnored = "state-filter-ignored" {
        breaks: r#"the grant list ignores `state` and always answers the default non-revoked set (§3 List)"#,
        catches: r#"2: `list_state_filters` (each filter lists exactly its grants)"#,
    },
    ConfirmIgnoresTriple = "confirm-ignores-triple" {
        breaks: r#"confirm skips the proposal-triple comparison (schema, version, digest) (§3 Confirm)"#,
        catches: r#"3: `confirm_changed_triple_conflict` (each element changed alone → 409 natively, state unchanged)"#,
    },
    ConfirmTwiceAccepted = "confirm-twice-accepted" {
        breaks: r#"confirming a grant already `awaiting_human` answers 200 again, changing nothing (§3 Confirm: any other state than `awaiting_agent` → 409)"#,
        catches: r#"3: `confirm_twice_conflict` (second confirmation → 409)"#,
    },
    BodyTruncated = "body-truncated" {
        breaks: r#"the Issue body is stored cut at 65,536 bytes (on a char boundary) while submit answers 201 as usual; the receipt keeps the whole body (§2 "no … truncation", §3 Submit `body` ≤ 262,144 bytes)"#,
        catches: r#"3: `large_body_read_back` (the 262,144-byte body read back byte for byte)"#,
    },
    MovedIssueReadsSubmitted = "moved-issue-reads-submitted" {
        breaks: r#"a receipt's `status` looks only at whether the Issue still exists, so a moved Issue reads `submitted` (§3 Submission `status`)"#,
        catches: r#"5: `moved_issue_changes_its_binding` (`issue_binding_changed` after the move)"#,
    },
    RequestKeyGlobal = "request-key-global" {
        breaks: r#"replay detection looks the request key up across all grants, so the same key in another grant answers the first grant's receipt (or 409 with another payload) (§3 Replay "Keys are scoped to the grant")"#,
        catches: r#"4: `replay_key_scoped_to_grant`; 7: `independent_grants_do_not_interfere` (same key in two grants → 201, 201)"#,
    },
    RevokedGrantAcceptsConfirm = "revoked-grant-accepts-confirm" {
        breaks: r#"confirm takes a `revoked` grant back to `awaiting_human` (§2: `revoked` is final; §3 Confirm)"#,
        catches: r#"6: `withdrawn_while_awaiting_agent`, `withdrawn_while_awaiting_human`, `withdrawn_while_active` (confirm after withdrawal → 409, still `revoked`)"#,
    },
    CsrfTtlIgnored = "csrf-ttl-ignored" {
        breaks: r#"`_csrf` tokens never expire (§4)"#,
        catches: r#"1: `csrf_expired_refused` (a token older than `CORE_CSRF_TTL_SECS` refused)"#,
    },
    ListDefaultIncludesRevoked = "list-default-includes-revoked" {
        breaks: r#"the grant list without `state` includes `revoked` grants (§3 List: the default is the non-revoked set)"#,
        catches: r#"2: `list_state_filters`; 6: the three `withdrawn_while_*` (a withdrawn grant leaves the default list); 7: `independent_grants_do_not_interfere`"#,
    },
    SubmitBeforeApproval = "submit-before-approval" {
        breaks: r#"submit accepts an `awaiting_agent` or `awaiting_human` grant (§3 Submit: grant must be `active`; §4 "Preparing is not approval; a bot's confirmation is not approval")"#,
        catches: r#"12: `submit_refused_before_approval` (native submit on `awaiting_agent` → 409, then on `awaiting_human`; adapter `conflict`)"#,
    },
    ApproveBeforeConfirmation = "approve-before-confirmation" {
        breaks: r#"approve takes an `awaiting_agent` grant straight to `active` (§2 states; §4 approve: `awaiting_human` → `active`)"#,
        catches: r#"12: `approve_refused_before_confirmation` (approve form, built by hand with the current `state_revision`, → 409, state unchanged)"#,
    },
    WriteCollaboratorAdministersGrants = "write-collaborator-administers-grants" {
        breaks: r#"a write collaborator passes the repo-admin check: opens the grant pages and prepares, approves and withdraws (§4 "who: repo admin")"#,
        catches: r#"12: `write_collaborator_gets_404` (list, new and grant pages and the three forms with wendy's own `_csrf` → 404, nothing changed)"#,
    },
    LogoutKeepsSession = "logout-keeps-session" {
        breaks: r#"logout clears the cookie in the browser but leaves the session alive on the server (§4 `POST /user/logout`: session ends)"#,
        catches: r#"13: `logout_ends_the_session` (the old cookie, sent again by another browser, must open no grant page)"#,
    },
    SessionCookieNotHttpOnly = "session-cookie-not-httponly" {
        breaks: r#"the session cookie is set without `HttpOnly` (§4 "Session cookie is `HttpOnly`, `SameSite=Lax`")"#,
        catches: r#"13: `session_cookie_httponly_lax` (the cookie the login answer sets that signs a browser in); in Chromium also 1: `real_browser_session_cookie_hidden_from_scripts` (`document.cookie` shows it)"#,
    },
    SessionCookieNoSameSite = "session-cookie-no-samesite" {
        breaks: r#"the session cookie is set without `SameSite` (§4 "`SameSite=Lax`"); Chromium then sends a fresh cookie with a cross-site POST"#,
        catches: r#"13: `session_cookie_httponly_lax` (its flags); in Chromium also 1: `real_browser_cross_site_post_changes_nothing` (another site's auto-posted approve form makes the grant `active`)"#,
    },
    DecisionButtonOutsideForm = "decision-button-outside-form" {
        browser: true,
        breaks: r#"the grant page's Approve and Withdraw buttons sit after their forms, with no `form` attribute: no click submits them (§4 "real HTML … usable without JavaScript")"#,
        catches: r#"1: `browser_forms_prepare_approve_withdraw`, `real_browser_reads_text_and_clicks` in Chromium only (the click finds no button inside the form; its self-test pass runs with `--browser chromium`); every HTTP-level trial passes, since the form is still posted without a button"#,
    },
    DecisionButtonCovered = "decision-button-covered" {
        browser: true,
        breaks: r#"a transparent layer (`position:fixed`, the whole viewport) lies over the grant page's Approve and Withdraw buttons: the page looks the same, but a person's click lands on the layer (§4 "real HTML … usable without JavaScript")"#,
        catches: r#"1: `browser_forms_prepare_approve_withdraw`, `real_browser_reads_text_and_clicks` in Chromium only (the click's point is where the button is hit-tested: `<div> covers it`; its self-test pass runs with `--browser chromium`); every HTTP-level trial passes"#,
    },
    StateWordInTitleOnly = "state-word-in-title-only" {
        breaks: r#"the grant page shows its state only in a `title` attribute (a tooltip), not as text (§7 "the text a person would read (the state word …)")"#,
        catches: r#"6: `withdrawn_while_*` (the page does not read `revoked`); in Chromium also 1: `real_browser_reads_text_and_clicks` (`innerText` lacks the word)"#,
    },
    TitleLimitOff = "title-limit-off" {
        breaks: r#"an Issue title over 255 characters is accepted (§3 Submit `title` 1–255 characters)"#,
        catches: r#"13: `title_limits` (256 multi-byte characters → 422 natively, `unprocessable` through the adapter)"#,
    },
    BodyLimitOff = "body-limit-off" {
        breaks: r#"an Issue body over 262,144 bytes is accepted (§3 Submit `body` ≤ 262,144 bytes)"#,
        catches: r#"13: `body_limits` (262,145 bytes → 422 natively, `unprocessable` through the adapter)"#,
    },
    MissingCredentialAnswers404 = "missing-credential-answers-404" {
        breaks: r#"an API request without any credential is answered 404, as if invisible, instead of 401 (§3 "401 no or bad credential")"#,
        catches: r#"13: `missing_or_wrong_token_is_401` (every grant route without a credential → 401)"#,
    },
    BearerSchemeCaseSensitive = "bearer-scheme-case-sensitive" {
        breaks: r#"the API reads the `Authorization` scheme case-sensitively: `token`, `Bearer` and `Basic` only as spelled, so `bearer T` is 401 (§1 token forms; RFC 9110 §11.1: the scheme is case-insensitive)"#,
        catches: r#"19: `credential_grammar` (`bearer T` on every grant, Issue and admin route)"#,
    },
    DeletedTokenBasicStillWorks = "deleted-token-basic-still-works" {
        breaks: r#"deleting a token only marks it, and only the `token`/`Bearer` path checks the mark, so Basic `login:token` of a deleted token still authenticates (§1 token forms, §3 401 bad credential)"#,
        catches: r#"19: `deleted_credential_grammar` (each form of a deleted token on every grant, Issue and admin route → 401)"#,
    },
    BlankTitleAccepted = "blank-title-accepted" {
        breaks: r#"an empty or whitespace-only Issue title is accepted (§3 Submit `title` not blank)"#,
        catches: r#"13: `title_limits` (empty and whitespace-only titles → 422, nothing written)"#,
    },
    ReplayComparesLiveIssue = "replay-compares-live-issue" {
        breaks: r#"replay compares the request with the Issue's live title and body instead of the stored input, so a human's edit breaks the key for the identical replay (409) and frees it for the edited text (§10 "The stored input, not the live Issue")"#,
        catches: r#"16: `exact_replay_after_human_edit` (after alice's edit the identical replay → 200 with the stored receipt)"#,
    },
    ReplayRewritesIssue = "replay-rewrites-issue" {
        breaks: r#"an identical replay writes the submitted title and body back into the Issue, undoing a human's edit (still 200, the stored receipt) (§10 "does not rewrite the edited Issue")"#,
        catches: r#"16: `exact_replay_after_human_edit` (the Issue keeps alice's edit after the replay)"#,
    },
    ReplayComparesRawBytes = "replay-compares-raw-bytes" {
        breaks: r#"replay compares the request's raw bytes with the first submission's (a digest kept in memory), so a replay with other member order, whitespace or escapes is 409 (§10 "decided on the decoded JSON, not the bytes")"#,
        catches: r#"16: `exact_replay_decoded_json` (reordered JSON sent natively → 200, one Issue)"#,
    },
    ReplayServedFromCache = "replay-served-from-cache" {
        breaks: r#"a cache in front of submit answers a request identical to an earlier success (same `Authorization`, path and bytes) with the stored answer before authenticating or rechecking anything (§10 "Replay is blocked … by a deleted or revoked token (401), and lost access")"#,
        catches: r#"16: `exact_replay_token_deleted` (the deleted token's identical replay → 401), `exact_replay_access_lost_and_restored` (→ 404)"#,
    },
    ConcurrentSubmitsCreateIssues = "concurrent-submits-create-issues" {
        breaks: r#"submit looks its key up and writes the Issue before taking the grant lock, each in its own transaction (waiting 500 ms between, so a burst always races): concurrent identical submissions each leave an Issue, while all but one still answer 200 with the one receipt (§3 Submit "one transaction", Replay "no new Issue")"#,
        catches: r#"15: `identical_submissions_in_flight`, `one_key_different_bodies_in_flight` (8 in flight → one Issue, counted natively)"#,
    },
    ConcurrentDecisionsBothApply = "concurrent-decisions-both-apply" {
        breaks: r#"approve/withdraw compare the form's `state_revision` on a read before the grant lock (waiting 500 ms, so a simultaneous pair always races), and the write applies to whatever the grant is by then (§2 `state_revision` compare-and-swap, §4 stale revision)"#,
        catches: r#"15: `concurrent_approvals_one_wins` (two approvals of revision 2 at once → one 303, one 409, revision 3)"#,
    },
    EnvelopeUnknownMemberAccepted = "envelope-unknown-member-accepted" {
        breaks: r#"the envelope grammar takes members it does not know, at the top level and inside `commit_count` (§8 "unknown members refused")"#,
        catches: r#"17: `invalid_envelopes_refused` (an extra member, top level and in `commit_count` → 422 page, no grant)"#,
    },
    EnvelopePublishAccepted = "envelope-publish-accepted" {
        breaks: r#"an envelope with `publish: true` is accepted (§8 "`publish` is `false`")"#,
        catches: r#"17: `invalid_envelopes_refused` (`publish: true` → 422 page, no grant)"#,
    },
    EnvelopeTraversalAccepted = "envelope-traversal-accepted" {
        breaks: r#"envelope patterns may hold `.`, `..` and `.git` segments (§8 refused patterns)"#,
        catches: r#"17: `invalid_envelopes_refused` (`../x`, `x/.git/y`, `.git/` → 422 page, no grant)"#,
    },
    EnvelopeDigestUnsorted = "envelope-digest-unsorted" {
        breaks: r#"the envelope digest is taken over the paths in the order given, not sorted by byte order (§8 canonical form)"#,
        catches: r#"17: `envelope_evidence_and_digest` (unsorted paths: the digest differs from the harness's own, sorted, JCS, SHA-256)"#,
    },
    EnvelopeGrantExecutes = "envelope-grant-executes" {
        breaks: r#"submit accepts a grant that carries an envelope (§8 fail-closed)"#,
        catches: r#"17: `enveloped_grant_fails_closed` (submit on an approved enveloped grant → 409 natively, `conflict` through the adapter, no Issue, readback 404)"#,
    },
    EnvelopeAdoptedFromTask = "envelope-adopted-from-task" {
        breaks: r#"preparing without a `repository_grant` field adopts a valid envelope found in the task or summary text (§8 never synthesised)"#,
        catches: r#"17: `envelope_never_synthesised` (task and summary holding an envelope → `repository_grant: null`)"#,
    },
    EnvelopePatternsExposed = "envelope-patterns-exposed" {
        breaks: r#"the grant JSON carries the envelope's raw `allowed_paths` next to `digest` and `path_count` (§8 bounded evidence only)"#,
        catches: r#"17: `envelope_patterns_never_exposed` (a marker pattern in no native answer, adapter result or log)"#,
    },
    EnvelopeMaxOffByOne = "envelope-max-off-by-one" {
        breaks: r#"the envelope's `commit_count.max` may be 33 (§8 `max <= 32`)"#,
        catches: r#"17: `invalid_envelopes_refused` (`max` 33 → 422 page, no grant)"#,
    },
    OauthSkipsPkce = "oauth-skips-pkce" {
        breaks: r#"the token endpoint does not check the `code_verifier` at all (§9 "bound to its … challenge")"#,
        catches: r#"18: a code exchanged with another (well-formed) verifier → 400 `invalid_grant`, in `consent_code_with_another_sessions_state`"#,
    },
    OauthCodeReusable = "oauth-code-reusable" {
        breaks: r#"the exchange reads the code without spending it, so it redeems again and again (§9 "A code is single use")"#,
        catches: r#"18: a second exchange of a redeemed code → 400 `invalid_grant` (also the concurrent double exchange: exactly one 200), in `consent_token_endpoint_binds_the_code`"#,
    },
    OauthRedirectPrefixMatch = "oauth-redirect-prefix-match" {
        breaks: r#"a registered `redirect_uri` matches as a prefix, at authorize and at the token endpoint (§9 "not registered exactly")"#,
        catches: r#"18: authorize with the registered URI extended (`…/callback/more`) → 400 page, no redirect; a code minted for the exact URI, exchanged with it extended → `invalid_grant` (checked on its own, so the token-side hook is seen even though authorize already fails), in `consent_authorize_refuses_what_is_not_registered`"#,
    },
    OauthPlainAccepted = "oauth-plain-accepted" {
        breaks: r#"`code_challenge_method=plain` or no method is accepted and the challenge compared as plain (§9 "a method other than `S256` gets a 400 page")"#,
        catches: r#"18: authorize with `plain`, and without a method → 400 page, no redirect, in `consent_authorize_refuses_what_is_not_registered`"#,
    },
    OauthCodeNeverExpires = "oauth-code-never-expires" {
        breaks: r#"authorization codes never expire (§9 `CORE_OAUTH_CODE_TTL_SECS`)"#,
        catches: r#"18: with `CORE_OAUTH_CODE_TTL_SECS` shortened, a code exchanged after it → `invalid_grant`, in `expired_consent_code_is_invalid_grant`"#,
    },
    OauthCodeAnyClient = "oauth-code-any-client" {
        breaks: r#"a code is exchanged under any `client_id` (§9 "bound to its client")"#,
        catches: r#"18: a code exchanged with another registered client's id (same redirect URI) → `invalid_grant`, in `consent_token_endpoint_binds_the_code`"#,
    },
    OauthConsentSkipsCsrf = "oauth-consent-skips-csrf" {
        breaks: r#"the consent form (`POST /login/oauth/grant`) skips the `_csrf` check (§4, §9 "carries `_csrf`")"#,
        catches: r#"18: consent without `_csrf`, with a foreign or garbled one → 400, no redirect, no code, in `consent_form_needs_its_own_csrf`"#,
    },
    OauthTokenAllScopes = "oauth-token-all-scopes" {
        breaks: r#"an OAuth token carries `read:repository write:issue` whatever was requested (§9 "at most the requested scopes")"#,
        catches: r#"18: a token asked for `read:repository` reports that scope and cannot create an Issue (403), in `consent_token_endpoint_binds_the_code`"#,
    },
    OauthLoginOpenRedirect = "oauth-login-open-redirect" {
        breaks: r#"the login form's `redirect_to` takes any non-empty value, so a login sends the browser to an absolute or `//` URL (§9 "the login form, then back": back to the Core only)"#,
        catches: r#"18: `GET /user/login?redirect_to=https://…` (also `//host`, `/\host`) carries no `redirect_to`, and the login answers 303 to `/`, in `consent_login_brings_back_only_to_the_core`"#,
    },
    CollaboratorScopeUnchecked = "collaborator-scope-unchecked" {
        breaks: r#"adding a collaborator (`PUT …/collaborators/{login}`) skips the `write:repository` scope check (§3 "403 credential lacks a scope")"#,
        catches: r#"18: `consent_is_not_approval` (alice's consented token, `read:repository write:issue`, adding a collaborator → 403)"#,
    },
    TimestampsNotRfc3339 = "timestamps-not-rfc3339" {
        breaks: r#"grants and receipts show every timestamp as SQL text (`2026-01-01 10:00:00`: no `T`, no offset) (§2, §3 "RFC 3339")"#,
        catches: r#"19: `timestamp_grammar` (every timestamp member, parsed strictly, on every native route and adapter tool)"#,
    },
    RequestKeyLenient = "request-key-lenient" {
        breaks: r#"a request key may be any UUID: any version or variant nibble, either case (§3 Submit "canonical lowercase UUIDv4")"#,
        catches: r#"19: `request_key_grammar` (other version and variant nibbles, uppercase → 422 on native submit, nothing written)"#,
    },
    BlankTitleSpacesOnly = "blank-title-spaces-only" {
        breaks: r#"a title is blank only when empty or spaces: a title of tabs, CR or LF is accepted (§3 Submit "not blank")"#,
        catches: r#"19: `title_grammar` (every one- and two-character string of space, tab, CR, LF → 422)"#,
    },
    DigestCaseFolded = "digest-case-folded" {
        breaks: r#"confirm and submit compare the digest without regard to case, so its uppercase spelling confirms (§2 "lowercase hex", §3 "a triple that differs … → 409")"#,
        catches: r#"19: `digest_grammar` (the grant's own digest in uppercase → 409 or 422 on confirm)"#,
    },
    ListNumbersLenient = "list-numbers-lenient" {
        breaks: r#"a list's `page` or `limit` that is not a positive integer (0, -1, `1.5`, `abc`) counts as absent, as Forgejo's form helpers read it (§3 "400 malformed … query", `page` ≥ 1, `limit` ≥ 1)"#,
        catches: r#"19: `number_grammar` (each invalid `page` and `limit` → 400 or 422)"#,
    },
    GrantTextTrimmed = "grant-text-trimmed" {
        breaks: r#"preparing stores the task and summary trimmed of surrounding whitespace (§2 "Text fields are strict UTF-8 kept whole: no trimming")"#,
        catches: r#"19: `grant_text_grammar` (a task and summary with spaces, tabs and CRLF around them read back whole through the native API)"#,
    },
    AdminReadsAnyGrant = "admin-reads-any-grant" {
        breaks: r#"get and readback serve a grant to any repository admin — the owner, an admin collaborator, a site admin — not only to its agent (§3 "for the grant's agent only: any other authenticated user gets 404")"#,
        catches: r#"12: `grant_route_authority_matrix` (alice and the site admin, each with a token of every scope, get and read back lab-bot's grants in every state → 404)"#,
    },
    ReadScopeAnyArea = "read-scope-any-area" {
        breaks: r#"any `read:` scope satisfies `read:repository`, so a token holding only `read:user` lists, gets and reads back grants (§3 table: `read:repository`; §1 only `write:X` implies `read:X`)"#,
        catches: r#"12: `grant_route_authority_matrix` (lab-bot with only `read:user` → 403 on list, get and readback)"#,
    },
    WriteRepositoryNotRead = "write-repository-not-read" {
        breaks: r#"`write:repository` does not imply `read:repository` (§1 "`write:X` implies `read:X`")"#,
        catches: r#"12: `grant_route_authority_matrix` (lab-bot with only `write:repository` lists, gets and reads back with 200; with `write:repository write:issue` it confirms and submits)"#,
    },
    WriterDeletesIssues = "writer-deletes-issues" {
        breaks: r#"deleting an Issue needs only write permission on the repository, not admin (§5 Issue delete: "repo or site admin")"#,
        catches: r#"12: `setup_route_authority_matrix` (wendy and the two bots, write collaborators, `DELETE …/issues/{index}` → 403, the Issue still there)"#,
    },
    WriterManagesCollaborators = "writer-manages-collaborators" {
        breaks: r#"adding or removing a collaborator needs only write permission on the repository, not admin (§5 collaborators, the site admin's setup surface; §3 403 "permission to act")"#,
        catches: r#"12: `setup_route_authority_matrix` (wendy and the two bots `PUT` mallory as a reader and `DELETE` rita → 403; mallory still cannot read, rita still can)"#,
    },
    RepoAdminMovesIssues = "repo-admin-moves-issues" {
        breaks: r#"the Issue move skips its site-admin check: an admin of both repositories may move an Issue (§5 move: "site admin")"#,
        catches: r#"12: `setup_route_authority_matrix` (alice, owner of alice/lab and alice/annex, moving an Issue → 403 or 404, the Issue still in alice/lab)"#,
    },
    LoginSkipsCsrf = "login-skips-csrf" {
        breaks: r#"the login form skips the `_csrf` check: a login without one, with an empty one or with another session's signs in (§4 "Every state-changing form carries a hidden `_csrf`"; a missing or foreign token gets 400)"#,
        catches: r#"1: `browser_csrf_matrix` (login × no, empty and foreign `_csrf`, foreign `X-Csrf-Token` → 400 and no session), `csrf_missing_refused`"#,
    },
    LogoutSkipsCsrf = "logout-skips-csrf" {
        breaks: r#"the logout form skips the `_csrf` check, so any page can sign a person out (§4 "Every state-changing form"; `POST /user/logout` is one)"#,
        catches: r#"1: `browser_csrf_matrix` (logout × no, empty and foreign `_csrf`, foreign `X-Csrf-Token` → 400, the session still signed in)"#,
    },
    CsrfHeaderAnySession = "csrf-header-any-session" {
        breaks: r#"a token sent as `X-Csrf-Token` is checked for its age only, not for its session (the `_csrf` field is still checked in full) (§4 "also accepted as header `X-Csrf-Token`"; a foreign token gets 400)"#,
        catches: r#"1: `browser_csrf_matrix` (every form × another session's token as `X-Csrf-Token` → 400, nothing changed), `csrf_foreign_refused`"#,
    },
    ReaderSeesGrantPage = "reader-sees-grant-page" {
        breaks: r#"a read (or write) collaborator opens a grant's page; its forms are still refused (§4 grant page "who: repo admin")"#,
        catches: r#"12: `browser_caller_matrix` (grant page × reader and writer → 404), `read_collaborator_gets_404`"#,
    },
    WriterMayWithdraw = "writer-may-withdraw" {
        breaks: r#"a write collaborator may withdraw a grant, and nothing else (§4 withdraw "who: repo admin")"#,
        catches: r#"12: `browser_caller_matrix` (withdraw × writer with its own `_csrf` → 404, the grant unchanged), `write_collaborator_gets_404`"#,
    },
    ApproveRevivesRevoked = "approve-revives-revoked" {
        breaks: r#"approve takes a `revoked` grant back to `active` (§2 "`revoked` (final)"; §4 approve: `awaiting_human` → `active`)"#,
        catches: r#"12: `browser_decision_state_matrix` (approve × revoked × current revision → 409, still `revoked`)"#,
    },
    OauthRedirectLooseMatch = "oauth-redirect-loose-match" {
        breaks: r#"a `redirect_uri` matches a registered one ignoring ASCII case and one trailing `/`, at authorize and at the token endpoint (§9 "registered exactly"; RFC 6749 §3.1.2.3 simple string comparison)"#,
        catches: r#"19: `authorize_grammar` (a trailing slash, the path or the host in another case → 400 page), `token_grammar` (a trailing slash → `invalid_grant`)"#,
    },
    OauthMethodCaseFolded = "oauth-method-case-folded" {
        breaks: r#"`code_challenge_method` is compared without regard to case, so `s256` passes (§9 "a method other than `S256`")"#,
        catches: r#"19: `authorize_grammar` (`s256` → 400 page, no redirect)"#,
    },
    OauthResponseTypeUnchecked = "oauth-response-type-unchecked" {
        breaks: r#"the authorize endpoint ignores `response_type`, so `token`, an empty one or none shows the consent form (§9 `response_type=code`; RFC 6749 §3.1.1)"#,
        catches: r#"19: `authorize_grammar` (a wrong or missing `response_type` → 400 page or an error back to the registered URI, never the consent form)"#,
    },
    OauthConsentTrustsForm = "oauth-consent-trusts-form" {
        breaks: r#"the consent decision (`POST /login/oauth/grant`) takes the posted `redirect_uri` without checking it is registered; the authorize page still checks it (§9 "not registered exactly … no redirect")"#,
        catches: r#"19: `consent_decision_grammar` (the consent form posted with an unregistered, extended or another client's `redirect_uri` → 400 or a code to a URI registered for the page's client only)"#,
    },
    RedirectQueryIgnored = "redirect-query-ignored" {
        breaks: r#"the consent redirect appends `?code=…&state=…` to a registered `redirect_uri` that already has a query, so its last value swallows the code (§9 consent redirect, RFC 6749 §3.1.2: the query "MUST be retained"; a cargo-mutants survivor, `docs/mutants.md`)"#,
        catches: r#"19: `consent_decision_grammar` (an application whose redirect URI has a query: the redirect keeps it and adds `code` and `state`)"#,
    },
    OauthScopeUnfiltered = "oauth-scope-unfiltered" {
        breaks: r#"a consent grants every requested Forgejo scope, `write:repository` and the admin scopes included, not only the two offered (§9 "at most the requested scopes of `read:repository write:issue`")"#,
        catches: r#"19: `scope_grammar` (a token asked for `read:repository write:repository` names only `read:repository` and cannot set a collaborator: 403/404)"#,
    },
    EnvelopeGitCaseSensitive = "envelope-git-case-sensitive" {
        breaks: r#"envelope patterns refuse a `.git` segment only in lowercase: `.Git`, `.GIT` … pass (§8 "any `.git` segment in any letter case")"#,
        catches: r#"19: `envelope_grammar` (the seven other spellings of `.git` first, inside, last and as a subtree → 422 page, no grant)"#,
    },
    EnvelopeIntegralFloatsAccepted = "envelope-integral-floats-accepted" {
        breaks: r#"the envelope's `min` and `max` accept integral floats (`1.0`, `32.0`) as integers (§8 "JSON integers")"#,
        catches: r#"17: `invalid_envelopes_refused` (`max` 1.0); 19: `envelope_grammar` (`1.0` and `32.0` in `min` and `max` → 422 page)"#,
    },
    GrantRepoUnchecked = "grant-repo-unchecked" {
        breaks: r#"grant routes find the grant by id in any repository the caller can read, whatever the path's `owner/repo` (§3 routes `/repos/{owner}/{repo}/agent-work-grants/{id}`: 404 for a grant not in that repository)"#,
        catches: r#"19: `native_segment_grammar` (lab-bot's grant under `alice/other`, where lab-bot writes, and `alice/other`'s grant under `alice/lab` → 404 on get, confirm, submit)"#,
    },
    WithdrawKeepsRevision = "withdraw-keeps-revision" {
        breaks: r#"withdrawing a grant that awaits the human (confirmed, not yet approved) leaves `state_revision` where it was; every other state change still adds one (§2 "increases by one on every state change")"#,
        catches: r#"6: `withdrawn_while_awaiting_human` (revoked at revision 3); 20: `explored_sequences_match_the_model` (withdraw a confirmed grant, alone or in a pair with a confirm, then read it)"#,
    },
    ReadbackStatusRemembered = "readback-status-remembered" {
        breaks: r#"a readback's status is the one the key's first readback computed: deleting or moving the Issue afterwards does not show (§3 "`status` is computed at read time")"#,
        catches: r#"20: `explored_sequences_match_the_model` found it first (submit, read back, delete or move the Issue, read back: still `submitted`; no written scenario read back before the Issue changed: the 112 other SQLite trials passed under it); 5: `deleted_issue_leaves_a_tombstone`, `moved_issue_changes_its_binding` now read back `submitted` first, so the self-test does not hang on a drawn seed"#,
    },
    GrantFormsAnyRepository = "grant-forms-any-repository" {
        breaks: r#"approve and withdraw find the grant by its id alone, so posted under another repository's URL — one the caller administers, even a stranger's own — they act on it (§3 "A grant is addressed only under its own repository", §4; found blind, `docs/blind.md`)"#,
        catches: r#"12: `grant_forms_under_another_repository` (the forms under another repository: 404, nothing changes)"#,
    },
    CollaboratorDemotionIgnored = "collaborator-demotion-ignored" {
        breaks: r#"changing a collaborator's permission keeps the old one: a bot demoted from write to read still confirms and submits (§3 "a grant never lends a bot a permission it does not hold"; §5 setup; found blind)"#,
        catches: r#"8: `demoted_to_reader_mid_flow` (a read collaborator's confirm and submit: 403)"#,
    },
    PublicUrlKeepsSlash = "public-url-keeps-slash" {
        breaks: r#"`CORE_PUBLIC_URL`'s trailing `/` is kept, so `html_url` and every `Link` URL have `//` between base and path (§5 "with or without a trailing `/`"; found blind)"#,
        catches: r#"every trial whose stack is launched with a trailing `/` (a third of them), e.g. 2: `list_clamped_width_continues` (`Link first` names `//api/v1/…`)"#,
    },
    LinkForgetsState = "link-forgets-state" {
        breaks: r#"the grant list's `Link` URLs leave out the request's `state` (§3 List "`Link` URLs address the same list"; found blind)"#,
        catches: r#"2: `list_state_filters` (1 per page: `Link next` keeps the filter)"#,
    },
    MovedBackReadsSubmitted = "moved-back-reads-submitted" {
        breaks: r#"a receipt's status compares the Issue's repository only, so an Issue moved away and back at another index reads `submitted` (§3 `status`; found blind)"#,
        catches: r#"5: `moved_issue_changes_its_binding` (moved back: `submitted` only at its old index)"#,
    },
    PrepareAcceptsHumanAgent = "prepare-accepts-human-agent" {
        breaks: r#"preparing accepts a human as the grant's agent (§2 "A grant lets one bot …"; found blind)"#,
        catches: r#"19: `grant_text_grammar` (a human as the agent lands on no grant page)"#,
    },
    TokenMintsTokens = "token-mints-tokens" {
        breaks: r#"a user's own API token mints tokens for that user (§5 tokens: "Basic auth of that user, or admin"; found blind)"#,
        catches: r#"12: `setup_route_authority_matrix` (rita's own token on the token route: 401 or 403)"#,
    },
    JsonArrayReadAsObject = "json-array-read-as-object" {
        breaks: r#"a JSON body of another top-level type is read as the object the route takes, so the members in an array in order pass: confirm answers 200 (§3 statuses: 422 for the wrong JSON type; refcore's own bug until the scenario found it)"#,
        catches: r#"19: `malformed_json_on_every_route` (the members in an array: 422)"#,
    },
    TokenAnswerCacheable = "token-answer-cacheable" {
        breaks: r#"the token endpoint's answer says `Cache-Control: private` instead of `no-store` (§9, RFC 6749 §5.1; found blind)"#,
        catches: r#"18: `consent_token_endpoint_binds_the_code` (every token answer: `no-store` among its directives, any case)"#,
    },
    PkceVerifierMax127 = "pkce-verifier-max-127" {
        breaks: r#"a PKCE verifier of 128 characters, RFC 7636's upper bound, is refused: `invalid_grant` (spec preamble, the standards' edges; found blind)"#,
        catches: r#"18: `consent_token_endpoint_binds_the_code` (verifiers of 43 and 128 characters exchange)"#,
    },
    BasicSplitsAtLastColon = "basic-splits-at-last-colon" {
        breaks: r#"a Basic credential is split at its last `:`, so a password holding one is refused 401 (spec preamble, RFC 7617: the user-id ends at the first colon; found blind)"#,
        catches: r#"10: `adapter_with_basic_credentials`; 19: `credential_grammar`; 12: `browser_caller_matrix` (every fixture password holds a `:`)"#,
    },
    FormPlusDecodedLate = "form-plus-decoded-late" {
        breaks: r#"form and query values are percent-decoded before `+` becomes a space, so a `+` the person typed (sent as `%2B`) is stored as a space (spec preamble: form text holding `+`; the HTML standard's urlencoded parser; found blind)"#,
        catches: r#"19: `grant_text_grammar` (a form's own characters, read back by the API and on the grant page)"#,
    },
    ApprovedByPreparer = "approved-by-preparer" {
        breaks: r#"a decision records the grant's preparer as its approver: alice prepares, the site admin or an admin collaborator approves, and the grant reads `approved_by: alice` (§2 members; found blind, round 2)"#,
        catches: r#"12: `browser_caller_matrix`, `grant_forms_under_another_repository` (every accepted decision read back whole: who approved, which timestamps, nothing else changed)"#,
    },
    JsonMediaTypeParamsRefused = "json-media-type-params-refused" {
        breaks: r#"a JSON body's `Content-Type` is compared whole, so `application/json; charset=utf-8` is refused 400 (spec preamble, RFC 9110 §8.3.1; found blind, round 2)"#,
        catches: r#"19: `request_key_grammar` (the native client sends the JSON media type in three spellings in turn, every trial)"#,
    },
    OauthStateUnencoded = "oauth-state-unencoded" {
        breaks: r#"the consent redirect appends `code` and `state` unencoded, so a state holding a space, `+ & = % #` comes back altered (§9, RFC 6749 §4.1.2; found blind, round 2)"#,
        catches: r#"18: `consent_token_endpoint_binds_the_code` (every state the harness sends holds those characters)"#,
    },
    PublicUrlFromListen = "public-url-from-listen" {
        breaks: r#"without `CORE_PUBLIC_URL` the base of `html_url` is `CORE_LISTEN` as written, so a Core launched on port 0 says `http://127.0.0.1:0/…` (§5 "absent means the bound address"; found blind, round 2)"#,
        catches: r#"15: `identical_submissions_in_flight` (every Issue the witness reads must have its own page as `html_url`; a third of the stacks launch on port 0 without a public URL)"#,
    },
    ReceiptUrlByIssueId = "receipt-url-by-issue-id" {
        breaks: r#"a receipt's Issue `html_url` is built from the Issue's global id, not its index (§3 submission; found blind, round 2)"#,
        catches: r#"3: `full_lifecycle` (the receipt's Issue is the Issue: id, index, repository, page; an ordinary Issue elsewhere first, so id and index differ)"#,
    },
    CookieFirstPairOnly = "cookie-first-pair-only" {
        breaks: r#"only the first pair of the `Cookie` header is read, so a browser holding another cookie of the host is signed out (§4 session cookie, RFC 6265 §5.4; found blind, round 2)"#,
        catches: r#"1: `csrf_expired_refused` (every human's requests carry another application's cookies before and after the Core's)"#,
    },
    IssueEditByWriter = "issue-edit-by-writer" {
        breaks: r#"the `issue-edit` extension lets any writer edit another person's Issue (§5 "by the poster or a repository admin"; found blind, round 3)"#,
        catches: r#"16: `issue_edit_by_poster_or_admin_only` (a writer, a reader and a stranger refused, the owner edits)"#,
    },
    WithdrawClearsApproval = "withdraw-clears-approval" {
        breaks: r#"withdrawing an approved grant clears `approved_by` and `approved_at` (§2: each timestamp null only until its event)"#,
        catches: r#"20: `explored_sequences_match_the_model` (the model predicts which timestamps are set and who approved after every step)"#,
    },
    PageShowsActiveAsAwaiting = "page-shows-active-as-awaiting" {
        breaks: r#"the grant page says an active grant is `awaiting_human` (§4: the grant page shows its state by its §2 name)"#,
        catches: r#"20: `explored_sequences_match_the_model` (after every step, alice's grant page says the model's state)"#,
    },
}
