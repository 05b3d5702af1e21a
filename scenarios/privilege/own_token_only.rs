//! Family 10: privilege separation — the adapter never holds the setup
//! credential or another bot's token: not in its environment, not in its
//! arguments, not in any request it sends.
//!
//! The checks ask the context whether a byte string holds a credential
//! (`credential_in`, `token_of_other_bots_in`, …) so that no credential is
//! ever handed to the scenario, let alone to its report.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT, active_grant};

/// The other bot of the `lab` fixture.
const OTHER_BOT: &str = "other-bot";

/// Reads `/proc/<pid>/<what>` of a bot's adapter. Unreadable is the
/// harness's problem (it started the process), never the adapter's.
fn proc_file(bot: &Bot, what: &str) -> Step<Vec<u8>> {
    let pid = bot
        .adapter_pid()
        .ok_or_else(|| Abort::errored(format!("{}: the adapter has no pid", bot.login())))?;
    std::fs::read(format!("/proc/{pid}/{what}"))
        .map_err(|e| Abort::errored(format!("reading /proc/{pid}/{what}: {e}")))
}

/// The names of a NUL-separated `environ`.
fn variable_names(environ: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = environ
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let name = v.split(|b| *b == b'=').next().unwrap_or_default();
            String::from_utf8_lossy(name).into_owned()
        })
        .collect();
    names.sort();
    names
}

/// With two bots' adapters side by side, each adapter's environment and
/// arguments hold its own token in `AWG_TOKEN` and nothing else secret.
#[scenario(Privilege, parity, clauses = ["S5.privilege"])]
async fn adapter_process_holds_only_its_own_token(ctx: &mut Ctx) -> Outcome {
    // Read from /proc. Nothing else: no setup token, admin password,
    // `CORE_SECRET_KEY`, other bot's token or `CORE_*` variable.
    ctx.step("lab-bot's and other-bot's adapters start side by side");
    let bots = [ctx.bot(LAB_BOT).await?, ctx.bot(OTHER_BOT).await?];
    let mut seen = Vec::new();
    for bot in &bots {
        let login = bot.login().to_owned();
        ctx.step(&format!(
            "{login}'s adapter: environment and arguments from /proc"
        ));
        let environ = proc_file(bot, "environ")?;
        let cmdline = proc_file(bot, "cmdline")?;
        // The read is only worth something if it is this bot's adapter.
        ctx.expect(
            "the environment holds the bot's own token",
            ctx.tokens().own_token_in(&login, &environ),
            "its own token is not in /proc/<pid>/environ",
        )?;
        let names = variable_names(&environ);
        ctx.expect(
            "the token is in AWG_TOKEN",
            names.iter().any(|n| n == "AWG_TOKEN"),
            &format!("{names:?}"),
        )?;
        for (what, bytes) in [("environment", &environ), ("arguments", &cmdline)] {
            ctx.expect(
                &format!("no setup credential in the {what}"),
                !ctx.setup().credential_in(bytes),
                "the setup token or admin password is there",
            )?;
            ctx.expect(
                &format!("no other bot's token in the {what}"),
                !ctx.tokens().token_of_other_bots_in(&login, bytes),
                "another bot's token is there",
            )?;
            ctx.expect(
                &format!("no other secret of the run in the {what}"),
                !ctx.tokens().secret_other_than_own_token_in(&login, bytes),
                "a registered secret (Core secret key, a password, a token) is there",
            )?;
        }
        ctx.expect(
            "the arguments do not hold the bot's own token (credentials only in the environment)",
            !ctx.tokens().own_token_in(&login, &cmdline),
            "its token is on the command line",
        )?;
        let core: Vec<&String> = names.iter().filter(|n| n.starts_with("CORE_")).collect();
        ctx.expect(
            "no CORE_* variable in the environment",
            core.is_empty(),
            &format!("{core:?}"),
        )?;
        seen.push(json!({"bot": login, "variables": names}));
    }
    ctx.observe("adapter environment variable names", &seen);
    Ok(())
}

/// Checks every captured request of an adapter acting for `login`: its own
/// token only as `Authorization: token …`, to the Core origin, and no other
/// credential anywhere.
fn expect_clean_traffic(
    ctx: &Ctx,
    login: &str,
    origin: &str,
    requests: &[CapturedRequest],
) -> Step<()> {
    ctx.expect(
        "the adapter's requests reached the proxy",
        !requests.is_empty(),
        "no request was captured",
    )?;
    for r in requests {
        let line = format!("{} {}", r.method, r.path_and_query);
        let whole = whole_request(r);
        ctx.expect(
            &format!("{line}: no setup credential"),
            !ctx.setup().credential_in(&whole),
            "the setup token or admin password was sent",
        )?;
        ctx.expect(
            &format!("{line}: no other bot's token"),
            !ctx.tokens().token_of_other_bots_in(login, &whole),
            "another bot's token was sent",
        )?;
        ctx.expect(
            &format!("{line}: no other secret of the run"),
            !ctx.tokens().secret_other_than_own_token_in(login, &whole),
            "a registered secret was sent",
        )?;
        let authorizations: Vec<&Vec<u8>> = r
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v)
            .collect();
        ctx.expect(
            &format!("{line}: exactly one Authorization, `token` + {login}'s own token"),
            authorizations.len() == 1 && ctx.tokens().is_token_authorization_of(login, authorizations[0]),
            &format!(
                "{} Authorization header(s), {}",
                authorizations.len(),
                if authorizations.len() == 1 {
                    "not the bot's own token"
                } else {
                    "expected one"
                }
            ),
        )?;
        let mut rest = r.clone();
        rest.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        ctx.expect(
            &format!("{line}: the token nowhere but in Authorization"),
            !ctx.tokens().own_token_in(login, &whole_request(&rest)),
            "the token is in the path, another header or the body",
        )?;
        let host: Vec<String> = r
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("host"))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .collect();
        ctx.expect_eq(
            &format!("{line}: sent to the Core origin"),
            host,
            vec![origin.to_owned()],
        )?;
    }
    Ok(())
}

/// The request line, headers and body as one byte string.
fn whole_request(r: &CapturedRequest) -> Vec<u8> {
    let mut bytes = format!("{} {}\n", r.method, r.path_and_query).into_bytes();
    for (k, v) in &r.headers {
        bytes.extend_from_slice(k.as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(v);
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(&r.body);
    bytes
}

/// The proxy's `host:port`, as the adapter's `Host` header names it.
fn proxy_host(proxy: &FaultProxy) -> String {
    proxy.url().trim_start_matches("http://").to_owned()
}

/// Every request lab-bot's adapter sends in a whole grant flow carries its
/// own token, only as `Authorization: token …` to the Core, and no other
/// secret.
#[scenario(Privilege, parity, clauses = ["S5.privilege", "S6.fixed-origin", "S6.credentials.no-browser", "S1.token.forms"])]
async fn adapter_traffic_carries_only_its_own_token(ctx: &mut Ctx) -> Outcome {
    // Never the setup credential or another bot's token; only to the Core
    // origin.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in; lab-bot's adapter goes through the proxy, other-bot's runs too");
    alice.login().await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let other = ctx.bot(OTHER_BOT).await?;
    let (grant, proposal) = active_grant(ctx, &alice, &bot, LAB, "Traffic check").await?;

    ctx.step("lab-bot submits, reads back and lists; other-bot lists on its own line");
    let issue = NewIssue::new("Traffic check", "Only my own token travels.\n");
    let submitted = bot.submit(&grant, &proposal, &issue).await?;
    ctx.expect_tool_ok("submit succeeds", &submitted)?;
    let back = bot.submission(&grant, &issue.request_key).await?;
    ctx.expect_tool_ok("readback succeeds", &back)?;
    let listed = bot.list_grants(None, None).await?;
    ctx.expect_tool_ok("list succeeds", &listed)?;
    let others = other.list_grants(None, None).await?;
    ctx.expect_tool_ok("other-bot's list succeeds", &others)?;

    ctx.step("every request lab-bot's adapter sent carries its own token only where it belongs");
    let proxy = ctx.proxy().await?;
    let requests = proxy.captured();
    ctx.expect_eq(
        "the flow's requests all reached the proxy (read, confirm, read, submit, readback, list)",
        requests.len(),
        6,
    )?;
    expect_clean_traffic(ctx, LAB_BOT, &proxy_host(&proxy), &requests)?;
    // The request key is random per run: the observation names it.
    ctx.observe(
        "lab-bot's requests",
        &requests
            .iter()
            .map(|r| {
                format!("{} {}", r.method, r.path_and_query)
                    .replace(&issue.request_key, "{request_key}")
            })
            .collect::<Vec<_>>(),
    );
    Ok(())
}

/// Over Streamable HTTP, an adapter holding other-bot's token acts for the
/// MCP caller's bearer, and only that token reaches the Core.
#[scenario(Privilege, parity, clauses = ["S6.credentials.bearer-wins", "S6.transports", "S0.standards.scheme-case"])]
async fn caller_bearer_wins_over_process_token(ctx: &mut Ctx) -> Outcome {
    // lab-bot's bearer reads and confirms its grant; every request reaching
    // the Core carries lab-bot's token, never other-bot's, also when the
    // client writes the scheme `bearer`.
    let alice = ctx.human("alice")?;
    ctx.step("alice prepares a grant for lab-bot");
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Bearer check", "summary")
        .await?;

    ctx.step(
        "lab-bot calls, with its own bearer, an adapter whose process holds other-bot's token",
    );
    let bot = ctx
        .bot_builder(LAB_BOT)
        .process_token_of(OTHER_BOT)
        .start()
        .await?;
    let read = bot.get_grant(&grant).await?;
    // What travelled is the claim; the answer follows from it.
    let proxy = ctx.proxy().await?;
    let origin = proxy_host(&proxy);
    expect_clean_traffic(ctx, LAB_BOT, &origin, &proxy.captured())?;
    ctx.expect_tool_ok("lab-bot reads its grant", &read)?;
    ctx.expect_eq("native status", read.native_status(), Some(200))?;
    let proposal = read.grant()?.proposal;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms its grant", &confirmed)?;
    let native_status = confirmed.native_status();
    let confirmed = confirmed.grant()?;
    ctx.expect_eq(
        "the grant awaits the human",
        confirmed.state.as_str(),
        state::AWAITING_HUMAN,
    )?;

    ctx.step("every request reaching the Core carried lab-bot's token, never other-bot's");
    let requests = proxy.captured();
    ctx.expect_eq(
        "two requests reached the proxy (read, confirm)",
        requests.len(),
        2,
    )?;
    expect_clean_traffic(ctx, LAB_BOT, &origin, &requests)?;
    ctx.observe("the confirmed grant", &(&confirmed.raw, native_status));

    ctx.step("a client sends the same bearer with its scheme in lower case (RFC 9110 §11.1)");
    let bearer = &ctx.tokens().bot_authorization_headers(LAB_BOT)?[1];
    let lower = format!("bearer {}", bearer.trim_start_matches("Bearer "));
    let auth = [("Authorization", lower.as_str())];
    let init = bot
        .post_mcp(&auth, initialize("2025-06-18", "grantgate-bearer-case"))
        .await?;
    let session = init.header("mcp-session-id").unwrap_or_default();
    let headers = [
        auth[0],
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    bot.post_mcp(&headers, note).await?;
    let arguments = json!({"owner": grant.owner, "repo": grant.repo, "grant_id": grant.id});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_agent_work_grant", "arguments": arguments}});
    let answer = bot.post_mcp(&headers, call).await?;
    let result = rpc_message(&answer).map(|m| m["result"].clone());
    let read = result
        .as_ref()
        .and_then(|r| r["structuredContent"]["grant"]["id"].as_i64());
    ctx.expect_eq(
        "lab-bot reads its grant with `bearer`",
        read,
        Some(grant.id),
    )?;
    expect_clean_traffic(ctx, LAB_BOT, &origin, &proxy.captured())?;
    Ok(())
}

/// An adapter whose process credential is lab-bot's Basic `login:password`
/// acts as lab-bot, and every request reaching the Core carries exactly that
/// credential.
#[scenario(Privilege, parity, clauses = ["S6.credentials.bearer-wins", "S1.token.forms", "S0.standards.basic-colon"])]
async fn adapter_with_basic_credentials(ctx: &mut Ctx) -> Outcome {
    // Spec §6; the password holds a `:` (RFC 7617). The adapter reads and
    // confirms lab-bot's grant.
    let alice = ctx.human("alice")?;
    ctx.step("alice prepares a grant for lab-bot");
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Basic credentials", "summary")
        .await?;

    ctx.step("lab-bot's adapter holds its Basic login:password, not its token");
    let bot = ctx.bot_builder(LAB_BOT).basic().via_proxy().start().await?;
    let read = bot.get_grant(&grant).await?;
    ctx.expect_tool_ok("lab-bot reads its grant", &read)?;
    let proposal = read.grant()?.proposal;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms its grant", &confirmed)?;
    let statuses = (read.native_status(), confirmed.native_status());
    ctx.expect_eq(
        "the grant awaits the human",
        confirmed.grant()?.state.as_str(),
        state::AWAITING_HUMAN,
    )?;

    ctx.step("every request reaching the Core carried lab-bot's Basic credential");
    let basic = ctx.tokens().bot_authorization_headers(LAB_BOT)?.swap_remove(3);
    let requests = ctx.proxy().await?.captured();
    let all_basic = !requests.is_empty()
        && requests.iter().all(|r| {
            let auth = r
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"));
            auth.map(|(_, v)| v.as_slice()).eq([basic.as_bytes()])
        });
    ctx.expect(
        "each request: one Authorization, lab-bot's Basic login:password",
        all_basic,
        &format!("{} request(s)", requests.len()),
    )?;
    ctx.observe("native statuses", &statuses);
    Ok(())
}
