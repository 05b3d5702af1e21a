//! awg-mcp's faults (`AWG_FAULT`), in the order `awg-mcp --list-faults`
//! prints them. A name starts with `adapter-`, or `consent-` for consent
//! mode (spec §9); none depends on the Core's backend.

use crate::catalogue;

catalogue! {
    AdapterFollowsRedirect = "adapter-follows-redirect" {
        breaks: r#"the upstream client (API requests, and consent mode's token POST, which shares it) follows up to 5 redirects, to any origin"#,
        catches: r#"9: redirect refused; 18: `failed_consent_exchange_never_resumes` (a token answer `307` to the token endpoint itself → `consent_failed`, one token POST)"#,
    },
    AdapterRetriesPost = "adapter-retries-post" {
        breaks: r#"a request whose response is lost (connection closed, timeout) is sent a second time"#,
        catches: r#"9: lost response → `delivery_uncertain`, no hidden second POST counted at the proxy, in `lost_response_then_readback`"#,
    },
    AdapterEchoesUpstreamBody = "adapter-echoes-upstream-body" {
        breaks: r#"a native 400/401/403/404/409/422 tool error carries the upstream body (bounded to the 300-character message)"#,
        catches: r#"9: raw bodies never echoed (a marker in the proxy's error body), in `upstream_body_never_echoed`"#,
    },
    AdapterAcceptsStringIds = "adapter-accepts-string-ids" {
        breaks: r#"IDs and `page` given as decimal strings (`"17"`) are accepted and forwarded"#,
        catches: r#"9, 14: `strict_inputs_refused_before_upstream`, `malformed_values_refused` (a string id or page → `invalid_input`, nothing at the proxy)"#,
    },
    AdapterSegmentsUnescaped = "adapter-segments-unescaped" {
        breaks: r#"`owner` and `repo` need only be free of `/` and not `.` or `..`, and go into the URL path unescaped (§6 "`owner`/`repo` are single path segments")"#,
        catches: r#"19: `segment_grammar` (`%2e%2e`, `%2F`, `?`, `#`, space, backslash in `owner` or `repo`: refused, or sent as exactly that one segment)"#,
    },
    AdapterInventsRequestKey = "adapter-invents-request-key" {
        breaks: r#"a submit without `request_key` gets a fresh UUIDv4 and is forwarded (§6 "never invents a request key")"#,
        catches: r#"9, 16: `strict_inputs_refused_before_upstream`, `exact_replay_key_is_the_callers` (a submit without any key → `invalid_input` naming `request_key`, no POST at the proxy)"#,
    },
    AdapterForwardsWrongCredential = "adapter-forwards-wrong-credential" {
        breaks: r#"over HTTP the process credential wins over the MCP request's own bearer"#,
        catches: r#"10: `caller_bearer_wins_over_process_token` (an HTTP adapter started with one bot's token, called with another bot's bearer, the proxy seeing the caller's)"#,
    },
    AdapterPublishesInconsistentReceipt = "adapter-publishes-inconsistent-receipt" {
        breaks: r#"submit and readback publish a receipt without the consistency check (grant id, owner/repo, key, agent, Issue repository)"#,
        catches: r#"9: inconsistent responses publish no receipt, in `malformed_success_publishes_no_receipt`"#,
    },
    AdapterAcceptsNonPositiveIntegers = "adapter-accepts-non-positive-integers" {
        breaks: r#"the consistency check takes any integer where the Core's answer holds an id, index or revision: 0 and negatives pass (§2 `state_revision` starts at 1; §6 "a malformed … success publishes no receipt")"#,
        catches: r#"9: `inconsistent_success_publishes_no_receipt` (a submit answered with the true receipt but `grant.state_revision` 0 → `delivery_uncertain`, no receipt)"#,
    },
    AdapterAcceptsRequestId = "adapter-accepts-request-id" {
        breaks: r#"submit takes `requestId` or `request_id` (ADR 0047's name) as another name for `request_key` and forwards it (§6 "Unknown inputs … are refused", "never invents or replaces a request key")"#,
        catches: r#"16: `exact_replay_key_is_the_callers` (`requestId` / `request_id` beside or instead of `request_key` → `invalid_input` naming it, no POST at the proxy)"#,
    },
    AdapterDropsUnknownInput = "adapter-drops-unknown-input" {
        breaks: r#"an unknown input (an approval, `state_revision`, scopes, a `repository_grant`, …) is dropped and the call forwarded without it, instead of refused (§6 strict inputs)"#,
        catches: r#"14: `unknown_inputs_refused` (every unknown input → `invalid_input` naming it, zero requests at the proxy)"#,
    },
    AdapterAssumesFullPages = "adapter-assumes-full-pages" {
        breaks: r#"a list page shorter than the adapter's 30 is taken as the last, whatever `Link` and `X-Total-Count` say (§6 List: continuation even when the Core clamps)"#,
        catches: r#"14: `clamped_pages_yield_every_grant` (a Core clamping to 10 still yields all 31 grants)"#,
    },
    AdapterLinklessEnds = "adapter-linkless-ends" {
        breaks: r#"a list answer without `Link` is taken as the last page, whatever `X-Total-Count` says (§6 List: continuation "from `X-Total-Count` / `Link`")"#,
        catches: r#"14: `clamped_pages_yield_every_grant` (with `Link` stripped by the proxy, page 1 of 31 grants must have more)"#,
    },
    AdapterLinkIgnoresQuotes = "adapter-link-ignores-quotes" {
        breaks: r#"`Link` is split at every comma and semicolon, inside quoted strings too: a `title` holding `<`, `,` or `;` breaks the list apart (RFC 8288 §3: parameter values may be quoted strings; §6 List continues from `Link`)"#,
        catches: r#"1: `clamped_pages_yield_every_grant` (the proxy writes the Core's `Link` another way RFC 8288 allows: one field line per target, empty list elements, `,` and `;` in the URL's query, a title that reads like a link, relations in upper case, those sharing a target in one quoted `rel` and a lone one as a bare token; the same 10 + 10 + 10 + 1 must come back)"#,
    },
    AdapterIgnoresOrigin = "adapter-ignores-origin" {
        breaks: r#"the HTTP transport serves a request whatever its `Origin` (§6 "Streamable HTTP (`/mcp`, loopback by default, Origin checked)"; MCP's transport answers a present, invalid `Origin` with 403)"#,
        catches: r#"14: `foreign_origin_refused` (an `initialize` with `Origin: https://evil.example` → 403, no session; without `Origin` → served)"#,
    },
    AdapterNoBodyLimit = "adapter-no-body-limit" {
        breaks: r#"the HTTP transport takes MCP request bodies of any size (§6 "refuses MCP request bodies over 1 MiB")"#,
        catches: r#"14: `oversized_request_refused` (an `initialize` of 1,048,577 bytes → a 4xx and no session, or the connection closed before it is read whole; one of exactly 1 MiB → served)"#,
    },
    AdapterReadsOneMebibyte = "adapter-reads-one-mebibyte" {
        breaks: r#"a Core's answer is read up to 1 MiB only, a longer one refused (§6 "Text is passed whole": a page of five Issues of the maximal 262,144-byte body is 1.3 MB)"#,
        catches: r#"3: `large_body_read_back` (`list_issues` of five maximal Issues gives every body whole)"#,
    },
    AdapterDropsOldRevisions = "adapter-drops-old-revisions" {
        breaks: r#"only the newest MCP revision with an `initialize` (2025-11-25) is served: a 2025-06-18 client is answered with 2025-11-25 (§6 "still serves 2025-06-18 and 2025-11-25 clients")"#,
        catches: r#"14: `protocol_revisions_served` (each named revision asked → the same revision agreed, a session, every tool listed)"#,
    },
    AdapterKnowsEverySession = "adapter-knows-every-session" {
        breaks: r#"every `Mcp-Session-Id` counts as a live session, an ended one too: a request under a session its client ended with `DELETE` is not answered 404 (§6 "Streamable HTTP": MCP's transport answers a request under a terminated session 404)"#,
        catches: r#"14: `protocol_revisions_served` (initialize, `DELETE` → 2xx, then `tools/list` under that session → 404; rmcp answers it 500 under the fault)"#,
    },
    AdapterSchemaWithoutContext = "adapter-schema-without-context" {
        breaks: r#"`get_agent_work_grant`'s and `confirm_agent_work_grant`'s input schemas in `tools/list` list no `owner`, `repo` or `grant_id` (§6's table of inputs; a client fills arguments from the schema)"#,
        catches: r#"14: `protocol_revisions_served` (each grant tool's `inputSchema` properties are exactly its inputs in §6's table)"#,
    },
    ConsentStateUnbound = "consent-state-unbound" {
        breaks: r#"the callback ignores the state's session: the token is stored for every session that has a state or a token and wakes every parked call (§9 "for the session the state belongs to", "never used for another session")"#,
        catches: r#"18: a second session that was told `auth_required` before the first one consented must be told `auth_required` again, not served (adapter test `consent_faults::state_unbound_hands_the_token_to_another_session`), in `consent_code_with_another_sessions_state`"#,
    },
    ConsentStateReusable = "consent-state-reusable" {
        breaks: r#"a spent state stays valid: a replayed callback is exchanged again (§9 "single use", "replayed … 400, nothing exchanged")"#,
        catches: r#"18: the same callback sent twice → the second 400 and still exactly one token POST at the Core, in `consent_callbacks_refused_exchange_nothing`"#,
    },
    ConsentStateNeverExpires = "consent-state-never-expires" {
        breaks: r#"states never expire (a parked call still ends at its deadline) (§9 "expiring after `--consent-timeout-secs`")"#,
        catches: r#"18: with a short `--consent-timeout-secs`, a callback after the timeout → 400 and no token POST, in `expired_consent_state_is_refused`"#,
    },
    ConsentStatesCappedTogether = "consent-states-capped-together" {
        breaks: r#"the adapter's cap of eight open states counts every session's states, so a ninth state pushes out the oldest of any session (§9 a state "bound to that MCP session", single use, expiring after `--consent-timeout-secs`: nothing else ends it)"#,
        catches: r#"18: `consent_code_with_another_sessions_state` (eight more sessions park while A's state is open; A's own callback is still accepted and resumes A)"#,
    },
    ConsentResumeBeforeExchange = "consent-resume-before-exchange" {
        breaks: r#"a parked call resumes as soon as a callback with a known state arrives, before and regardless of the exchange (§9 "only when it succeeds is the token stored … and its call resumed")"#,
        catches: r#"18: a failed exchange (wrong code or a refusing token endpoint) must end the parked call `consent_failed`, and a successful one must resume it with success — under the fault it ends `unauthenticated`, in `parked_call_resumes_after_consent`"#,
    },
    ConsentSharedVerifier = "consent-shared-verifier" {
        breaks: r#"one PKCE verifier for every state of the process (§9 "a fresh PKCE S256 verifier")"#,
        catches: r#"18: two authorize URLs (two sessions or two calls) carry different `code_challenge`s, in `auth_required_then_retry_after_consent`"#,
    },
    ConsentPlainChallenge = "consent-plain-challenge" {
        breaks: r#"`code_challenge_method=plain` with the verifier as the challenge (§9 "PKCE S256")"#,
        catches: r#"18: the authorize URL carries `code_challenge_method=S256` (refcore also refuses `plain` with a 400 page, so the consent never completes), in `parked_call_resumes_after_consent`"#,
    },
    ConsentRedirectFromHost = "consent-redirect-from-host" {
        breaks: r#"`redirect_uri` is built from the MCP request's `Host` instead of `--public-url` (§9 "never from `Host`")"#,
        catches: r#"18: the authorize URL's `redirect_uri` is exactly `<public-url>/mcp/oauth/callback` with a `--public-url` other than the address the client connects to, in `parked_call_resumes_after_consent`"#,
    },
    ConsentTokenOnDisk = "consent-token-on-disk" {
        breaks: r#"the consented token is also written to `awg-mcp-token` in the working directory (§9 "never written to disk")"#,
        catches: r#"18: after a completed consent the adapter's (fresh, empty) working directory is still empty, and no file anywhere under it holds the token, in `no_consent_token_on_disk`"#,
    },
    ConsentSessionEndForgetsNothing = "consent-session-end-forgets-nothing" {
        breaks: r#"an MCP session's end (`DELETE`, or its handler stopping) keeps its states and token (§9 "or one whose MCP session has ended, gets a 400 page and nothing is exchanged", "dropped when the session ends")"#,
        catches: r#"18: `consent_callbacks_refused_exchange_nothing`: session B parks, alice consents for it, B ends, and B's callback must get 400 with no token POST"#,
    },
    ConsentIgnoresBearer = "consent-ignores-bearer" {
        breaks: r#"in consent mode a request's own usable bearer counts for nothing: the call parks and asks for consent (URL elicitation, or `auth_required`) as if it carried no credential, and runs with the session's consented token once there is one (§9 "A request bearer or process credential takes precedence: then no state is minted")"#,
        catches: r#"18: `request_bearer_wins_over_consent` (a consent-mode adapter whose client sends lab-bot's own token as its bearer: the call reads lab-bot's grant at once, no elicitation arrives, no token POST at the proxy; adapter test `consent_faults::ignores_bearer_parks_a_call_that_carries_one`)"#,
    },
    ConsentSmallTokenAnswer = "consent-small-token-answer" {
        breaks: r#"the token answer is read up to 1 KiB only (§9: the answer is `{access_token, token_type, expires_in, scope}`, and a Core may add members: an OpenID Provider's `id_token` alone is about 1 KiB)"#,
        catches: r#"18: `parked_call_resumes_after_consent` (a token answer carrying a 4 KiB member of its own still resumes the call)"#,
    },
    ConsentAnyTokenType = "consent-any-token-type" {
        breaks: r#"a token of any `token_type` is used as a bearer token (§9 `token_type: "bearer"`; RFC 6749 §7.1: a client must not use a token whose type it does not understand)"#,
        catches: r#"18: `failed_consent_exchange_never_resumes` (a token answer of type `mac` → `consent_failed`, no native request)"#,
    },
    AdapterVersionFloatAccepted = "adapter-version-float-accepted" {
        breaks: r#"`proposal_version` is compared as a number, so `1.0` is forwarded to the Core (§6 inputs are strict: the JSON integer 1; found blind)"#,
        catches: r#"14: `malformed_values_refused` (`proposal_version` 1.0 or "1": `invalid_input`, nothing reaches the Core)"#,
    },
    AdapterBearerSchemeCaseSensitive = "adapter-bearer-scheme-case-sensitive" {
        breaks: r#"over Streamable HTTP a caller's `Authorization` counts only as `Bearer`, not `bearer` (RFC 9110 §11.1: the scheme is case-insensitive; found blind)"#,
        catches: r#"10: `caller_bearer_wins_over_process_token` (a client writing `bearer`: served as lab-bot)"#,
    },
    AdapterLostConfirmIsReadError = "adapter-lost-confirm-is-read-error" {
        breaks: r#"a confirm whose answer is lost or unclear is reported as a failed read (`upstream_error`) instead of `delivery_uncertain` (§6 "A lost response … is reported as `delivery_uncertain`": confirm POSTs)"#,
        catches: r#"9: `lost_response_then_readback` (the lost confirm: `delivery_uncertain` after one POST, committed)"#,
    },
    ConsentElicitsAnyClient = "consent-elicits-any-client" {
        breaks: r#"a URL-mode elicitation goes to any client that declared an elicitation mode, so a client declaring form mode only is sent one it never asked for instead of `auth_required` (§9 delivery: URL mode only to a client that declared it)"#,
        catches: r#"18: `auth_required_then_retry_after_consent` (a form-only client: `auth_required`, no elicitation)"#,
    },
    AdapterBasicPasswordCutAtColon = "adapter-basic-password-cut-at-colon" {
        breaks: r#"the adapter's Basic credential is sent with its password cut at the first `:` (spec preamble, RFC 7617: the password may hold `:`; found blind as an adapter that refused such a password at start)"#,
        catches: r#"10: `adapter_with_basic_credentials` (every fixture password holds a `:`; lab-bot's Basic adapter reads and confirms its grant)"#,
    },
    AdapterLinkRelNameCaseSensitive = "adapter-link-rel-name-case-sensitive" {
        breaks: r#"the adapter finds `Link`'s `rel` parameter only in lower case, so `REL=next` is no next page (RFC 8288 §3: parameter names are case-insensitive; spec preamble; found blind)"#,
        catches: r#"14: `clamped_pages_yield_every_grant` (the proxy writes `Link` another way RFC 8288 allows, `REL=` among it)"#,
    },
    AdapterSegmentMax99 = "adapter-segment-max-99" {
        breaks: r#"an `owner` or `repo` of 100 characters is refused `invalid_input`, though the Core serves it (§6: single path segments; found blind, round 2)"#,
        catches: r#"19: `longest_name_through_the_adapter` (the longest repository name the Core takes, through every tool)"#,
    },
    AdapterConfirmTakesSubmitInputs = "adapter-confirm-takes-submit-inputs" {
        breaks: r#"the confirm tool's inputs are submit's: `request_key`, `title` and `body` pass (§6 unknown inputs refused; found blind, round 3)"#,
        catches: r#"14: `unknown_inputs_refused` (every other grant tool's input added to each grant tool)"#,
    },
    AdapterDotSegmentAccepted = "adapter-dot-segment-accepted" {
        breaks: r#"an `owner` or `repo` of `.` passes the segment check and ends in an internal error (§6: single path segments; found blind, round 3)"#,
        catches: r#"19: `segment_grammar` (`.`, `..` and the empty segment among the values)"#,
    },
    AdapterLoopbackPrefix = "adapter-loopback-prefix" {
        breaks: r#"any host whose name begins with `localhost` counts as loopback, so a page on `localhost.evil.test` passes the `Origin` check (§6 Origin checked; found blind, round 3)"#,
        catches: r#"14: `foreign_origin_refused` (lookalikes of the loopback names and `null`)"#,
    },
    ConsentAnyErrorDenied = "consent-any-error-denied" {
        breaks: r#"any `error` on the consent callback counts as the person's refusal: `server_error` ends the call `consent_denied` (§9 outcomes, RFC 6749 §4.1.2.1; found blind, round 3)"#,
        catches: r#"18: `denied_consent_ends_the_call` (`server_error`, `temporarily_unavailable`, `invalid_scope` end it `consent_failed`)"#,
    },
    AdapterGetGrantRepoUnchecked = "adapter-get-grant-repo-unchecked" {
        breaks: r#"`get_agent_work_grant` checks the answer's grant id only, so a grant of another repository is published (§6 consistent results; found blind, round 3)"#,
        catches: r#"9: `inconsistent_grant_answers_publish_nothing` (get and confirm answered for another grant or repository)"#,
    },
    AdapterUnknownNullIgnored = "adapter-unknown-null-ignored" {
        breaks: r#"an unknown input whose value is `null` is dropped and the call goes on (§6 unknown inputs refused; found blind, round 4)"#,
        catches: r#"14: `unknown_inputs_refused` (each named unknown also as `null` and `false`)"#,
    },
    AdapterContentPriorityOverOne = "adapter-content-priority-over-one" {
        breaks: r#"a successful tool answer's content item carries `annotations: {"priority": 2.0}`, which rmcp takes but MCP's schema bounds to 0..1 (§6: awg-mcp speaks MCP, held to the official JSON schema of the negotiated revision; issue #46)"#,
        catches: r#"3: `full_lifecycle`, and every trial whose bot gets a successful tool answer (the harness holds each message to MCP's schema: "awg-mcp of lab-bot sent a message MCP's schema (2025-11-25) forbids: not a valid CallToolResult … (at `/content/0`)")"#,
    },
}
