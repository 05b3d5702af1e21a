//! Humans in headless Chromium (`grantgate run --browser chromium`): one
//! `chromedriver` per run, one WebDriver session — its own Chromium process
//! and profile — per human browser, driven with `fantoccini`; wiped and
//! reused by a later trial's human once its trial ends.
//!
//! What the browser does itself: it renders the page (its text is the DOM's
//! `innerText`), keeps cookies as Chromium does (`HttpOnly`, `SameSite`),
//! follows redirects, and submits a form when its submit button is clicked.
//! Status codes and redirects, which WebDriver does not expose, are read from
//! Chromium's own network log (`goog:loggingPrefs`).
//!
//! No browser process outlives a run: chromedriver is a tied child in its
//! own process group (killed with the harness, by teardown or an
//! interrupt), Chromium is started through `setpriv --pdeathsig KILL` so it
//! dies with chromedriver, and every profile lies in a `grantgate-stack-`
//! directory, which the next run's sweep clears with any process still
//! naming it ([`crate::sweep`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use fantoccini::wd::WebDriverCompatibleCommand;
use serde_json::{Value, json};

use crate::child::ManagedChild;
use crate::error::HarnessError;
use crate::vocab::{Abort, Step};

/// How long a page may take to load (a navigation or a form's answer).
const PAGE_LOAD: Duration = Duration::from_secs(15);

/// How long chromedriver may take to say it listens.
const DRIVER_START: Duration = Duration::from_secs(20);
/// Starts of chromedriver that may end in its port-0 race (see `start_with`).
const DRIVER_PORT_TRIES: u32 = 4;

/// The most of Chromium's network log read at once. A page decides how many
/// requests it makes, so how long the log grows: one that outgrows this
/// fails its step, and its browser is not used again.
const LOG_LIMIT: usize = 8 * 1024 * 1024;

/// The install command named when Chromium or chromedriver is missing.
pub const INSTALL: &str = "apt-get install chromium chromium-driver chromium-headless-shell";

/// Which browser humans use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BrowserKind {
    /// HTTP-level: reqwest, a cookie jar and an HTML parser.
    #[default]
    Http,
    /// Headless Chromium through chromedriver.
    Chromium,
}

/// The run's chromedriver, and the directory of every profile.
pub struct Driver {
    child: tokio::sync::Mutex<Option<ManagedChild>>,
    url: String,
    dir: tempfile::TempDir,
    launcher: PathBuf,
    /// `Chromium 156.0.8078.114`, as `chromium --version` says.
    pub version: String,
    profiles: AtomicU64,
    /// For the commands read with a bound ([`Driver::network_log`]).
    http: reqwest::Client,
    /// Browsers ready for the next human: started ahead of need (a Chromium
    /// takes a second or more to start), or wiped after an earlier human.
    spare: tokio::sync::Mutex<Vec<Seat>>,
    /// Browsers being started for `spare`.
    starting: AtomicUsize,
    /// Browsers being wiped for `spare` after their human was done.
    returning: AtomicUsize,
    /// Told when a browser being wiped is in `spare` or gone.
    returned: tokio::sync::Notify,
}

/// Browsers [`Driver`] keeps started ahead of need.
const SPARE: usize = 2;

/// Browsers [`Driver`] keeps at most, started ahead or wiped for reuse.
const POOL: usize = 6;

/// What `Storage.clearDataForOrigin` wipes of an origin a human saw.
const STORAGE: &str = "local_storage,indexeddb,service_workers,cache_storage,file_systems,shared_storage,storage_buckets";

/// `name` on `PATH`, or the path an environment variable names.
fn find(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Whether Chromium, chromedriver and setpriv are all there: an HTTP-level
/// run then gives the real-browser scenarios a browser of their own.
pub fn installed() -> bool {
    crate::chromium::find_chromium().is_some()
        && find("GRANTGATE_CHROMEDRIVER", &["chromedriver"]).is_some()
        && find("GRANTGATE_SETPRIV", &["setpriv"]).is_some()
}

/// A missing part of the browser, with the command that installs it.
fn missing(what: &str) -> HarnessError {
    HarnessError::process(
        "browser",
        format!(
            "--browser chromium needs {what}, which is not installed: run `{INSTALL}` \
             (Debian), or set GRANTGATE_CHROMIUM / GRANTGATE_CHROMEDRIVER to the binaries"
        ),
    )
}

impl Driver {
    /// Starts chromedriver for a run. A missing Chromium or chromedriver is
    /// an environment error naming [`INSTALL`].
    pub async fn start() -> Result<Arc<Driver>, HarnessError> {
        let chromium = crate::chromium::find_chromium().ok_or_else(|| missing("Chromium"))?;
        let chromedriver = find("GRANTGATE_CHROMEDRIVER", &["chromedriver"])
            .ok_or_else(|| missing("chromedriver"))?;
        Driver::start_with(chromium, chromedriver).await
    }

    /// [`start`](Self::start) with this Chromium and chromedriver.
    async fn start_with(
        chromium: PathBuf,
        chromedriver: PathBuf,
    ) -> Result<Arc<Driver>, HarnessError> {
        let setpriv = find("GRANTGATE_SETPRIV", &["setpriv"])
            .ok_or_else(|| missing("setpriv (util-linux)"))?;
        let version = std::process::Command::new(&chromium)
            .arg("--version")
            .output()
            .map_err(|e| missing(&format!("a Chromium that starts ({e})")))?;
        let mut version = String::from_utf8_lossy(&version.stdout)
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        if chromium.to_string_lossy().contains("headless-shell") {
            version.push_str(" (headless shell)");
        }
        let dir = crate::sweep::owned_tempdir("grantgate-stack-browser-")
            .map_err(|e| HarnessError::process("browser", format!("browser directory: {e}")))?;
        // Chromium dies with chromedriver, however chromedriver dies. Its
        // first tab is blank: given no URL (chromedriver gives none), it opens
        // the new-tab page, hundreds of requests that starve a dozen browsers.
        // What it says goes to `<profile>.log` (chromedriver discards it),
        // for a start that fails; only fatal messages (chromedriver asks for
        // all, the last `--log-level` counts), so no page can fill the file.
        let launcher = dir.path().join("chromium");
        std::fs::write(
            &launcher,
            format!(
                "#!/bin/sh\n\
                 for a; do case $a in --user-data-dir=*) log=\"${{a#--user-data-dir=}}.log\";; esac; done\n\
                 exec 2>>\"${{log:-/dev/null}}\"\n\
                 exec {} --pdeathsig KILL -- {} \"$@\" --log-level=3 about:blank\n",
                shell_quote(&setpriv),
                shell_quote(&chromium)
            ),
        )
        .and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))
        })
        .map_err(|e| HarnessError::process("browser", format!("browser launcher: {e}")))?;
        // Chromium's own temporary directories go inside the swept one.
        let mut env: Vec<(String, String)> = ["PATH", "HOME", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
            .collect();
        env.push(("TMPDIR".into(), dir.path().display().to_string()));
        // Given port 0, chromedriver takes a free port for one address
        // family and then binds the other family's same port, which another
        // process may hold: it then exits saying the port is not available.
        // That race is chromedriver's, not the Core's, so a few fresh starts.
        let mut tries = 0;
        let (child, line) = loop {
            tries += 1;
            let mut child = ManagedChild::spawn(
                "chromedriver",
                &chromedriver,
                &["--port=0".to_owned()],
                &env,
                dir.path(),
            )?;
            match child
                .wait_for_line("ChromeDriver was started successfully", DRIVER_START)
                .await
            {
                Ok(line) => break (child, line),
                Err(e)
                    if tries < DRIVER_PORT_TRIES
                        && e.to_string().contains("port not available") => {}
                Err(e) => return Err(e),
            }
        };
        let port = line
            .trim_end()
            .trim_end_matches('.')
            .rsplit(' ')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| {
                HarnessError::process("browser", format!("chromedriver said `{line}`"))
            })?;
        let driver = Arc::new(Driver {
            child: tokio::sync::Mutex::new(Some(child)),
            url: format!("http://127.0.0.1:{port}"),
            dir,
            launcher,
            version,
            profiles: AtomicU64::new(0),
            http: reqwest::Client::builder()
                .timeout(PAGE_LOAD)
                .build()
                .map_err(|e| HarnessError::process("browser", format!("HTTP client: {e}")))?,
            spare: tokio::sync::Mutex::new(Vec::new()),
            starting: AtomicUsize::new(0),
            returning: AtomicUsize::new(0),
            returned: tokio::sync::Notify::new(),
        });
        Ok(driver)
    }

    /// A fresh browser: one started ahead, or wiped after its last human
    /// (waited for while one is being wiped), else a new one; starts the
    /// next ahead.
    async fn take(self: &Arc<Self>) -> Step<Seat> {
        let ready = self.spare_or_returned().await;
        self.start_ahead().await;
        match ready {
            Some(seat) => Ok(seat),
            None => self.session().await,
        }
    }

    /// A browser from `spare`, waiting for those being wiped; `None` when
    /// there is none and none is coming.
    async fn spare_or_returned(&self) -> Option<Seat> {
        loop {
            let returned = self.returned.notified();
            tokio::pin!(returned);
            returned.as_mut().enable();
            if let Some(seat) = self.spare.lock().await.pop() {
                return Some(seat);
            }
            if self.returning.load(Ordering::SeqCst) == 0 {
                return None;
            }
            // (A wipe is bounded by a page load.)
            let _ = tokio::time::timeout(PAGE_LOAD, returned).await;
        }
    }

    /// Starts browsers in the background until [`SPARE`] are ready or on
    /// their way (counted under the lock: takers at once start no more).
    pub(crate) async fn start_ahead(self: &Arc<Self>) {
        let spare = self.spare.lock().await;
        let coming = self.starting.load(Ordering::SeqCst) + self.returning.load(Ordering::SeqCst);
        for _ in spare.len() + coming..SPARE {
            self.starting.fetch_add(1, Ordering::SeqCst);
            let driver = self.clone();
            tokio::spawn(async move {
                let seat = driver.session().await;
                let mut spare = driver.spare.lock().await;
                driver.starting.fetch_sub(1, Ordering::SeqCst);
                if let Ok(seat) = seat {
                    spare.push(seat);
                }
            });
        }
    }

    /// A fresh browser: its own Chromium process and profile.
    async fn session(&self) -> Step<Seat> {
        let n = self.profiles.fetch_add(1, Ordering::SeqCst);
        // (`.d`: no profile's path is a prefix of another's.)
        let profile = self.dir.path().join(format!("profile-{n}.d"));
        let caps = json!({
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "goog:loggingPrefs": {"performance": "ALL"},
            "goog:chromeOptions": {
                "binary": self.launcher,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", "--no-first-run",
                    "--disable-background-networking", "--disable-extensions",
                    "--disable-sync", "--password-store=basic",
                    "--window-size=1024,768",
                    // CPU, not behaviour: a new frame per document costs a
                    // third more a navigation, and the GPU and network
                    // services as processes of their own, two more starts
                    // per browser (the network service runs the same code,
                    // cookie rules included, in the browser's process).
                    "--disable-features=RenderDocument",
                    "--in-process-gpu", "--enable-features=NetworkServiceInProcess2",
                    format!("--user-data-dir={}", profile.display()),
                ],
                "perfLoggingPrefs": {"enableNetwork": true, "enablePage": false},
            },
        });
        let serde_json::Value::Object(caps) = caps else {
            unreachable!("an object literal")
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = fantoccini::ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&self.url)
            .await
            .map_err(|e| {
                let said = said_at_start(&profile);
                Abort::errored(format!("starting Chromium: {e} (Chromium said: {said})"))
            })?;
        client
            .update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
                Some(Duration::from_secs(10)),
                Some(PAGE_LOAD),
                Some(Duration::ZERO),
            ))
            .await
            .map_err(|e| Abort::errored(format!("browser timeouts: {e}")))?;
        let id = client
            .session_id()
            .await
            .ok()
            .flatten()
            .ok_or_else(|| Abort::errored("starting Chromium: no session id"))?;
        Ok(Seat {
            client,
            id,
            profile,
        })
    }

    /// Takes back a browser its human is done with, in the background:
    /// wiped of all a site can observe (cookies, cache, storage of every
    /// origin it showed, its page) it waits for the next human, as a fresh
    /// profile would; a browser that cannot be wiped, or one too many, is
    /// closed.
    fn give_back(self: Arc<Self>, seat: Seat, origins: Vec<String>) {
        self.returning.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            self.wipe(&seat, origins).await;
            self.returning.fetch_sub(1, Ordering::SeqCst);
            self.returned.notify_waiters();
        });
    }

    async fn wipe(&self, seat: &Seat, origins: Vec<String>) {
        let client = &seat.client;
        let wiped = async {
            let windows = client.windows().await.map_err(|_| ())?;
            if windows.len() != 1 || self.spare.lock().await.len() >= POOL {
                return Err(());
            }
            client.goto("about:blank").await.map_err(|_| ())?;
            let cdp = |cmd, params| cdp(client, cmd, params);
            cdp("Network.clearBrowserCookies", json!({}))
                .await
                .map_err(|_| ())?;
            cdp("Network.clearBrowserCache", json!({}))
                .await
                .map_err(|_| ())?;
            for origin in origins {
                // (Cookies, which go by host and not by origin, went above.)
                let params = json!({"origin": origin, "storageTypes": STORAGE});
                cdp("Storage.clearDataForOrigin", params)
                    .await
                    .map_err(|_| ())?;
            }
            // The network log of the wiping goes too.
            self.network_log(seat).await.map_err(|_| ())
        };
        // (A browser that does not answer within a page load is not kept.)
        match tokio::time::timeout(PAGE_LOAD, wiped).await {
            Ok(Ok(_)) => self.spare.lock().await.push(seat.clone()),
            _ => {
                let _ = client.clone().close().await;
            }
        }
    }

    /// Chromium's network log since the last read, emptying it: its
    /// DevTools events (`method`, `params`). A log over [`LOG_LIMIT`] is the
    /// page's failure, refused unread.
    async fn network_log(&self, seat: &Seat) -> Step<Vec<Value>> {
        let broken = |e: &dyn std::fmt::Display| {
            Abort::errored(format!("browser: reading the network log: {e}"))
        };
        let mut answer = self
            .http
            .post(format!("{}/session/{}/se/log", self.url, seat.id))
            .json(&json!({"type": "performance"}))
            .send()
            .await
            .map_err(|e| broken(&e))?;
        let mut body = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(|e| broken(&e))? {
            if body.len() + chunk.len() > LOG_LIMIT {
                return Err(Abort::failed(format!(
                    "the page made more requests than the harness reads: Chromium's network log \
                     is over {} MiB",
                    LOG_LIMIT >> 20
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let log: Value = serde_json::from_slice(&body).map_err(|e| broken(&e))?;
        // Each entry holds its DevTools event as a JSON string.
        let entries = log["value"].as_array().into_iter().flatten();
        let events = entries.filter_map(|e| e["message"].as_str());
        let events = events.filter_map(|m| serde_json::from_str::<Value>(m).ok());
        Ok(events.map(|mut m| m["message"].take()).collect())
    }

    /// Stops chromedriver and every Chromium it started.
    pub async fn stop(&self) {
        // Browsers still being wiped go with the rest.
        let mut spare = Vec::new();
        while let Some(seat) = self.spare_or_returned().await {
            spare.push(seat.client.close());
        }
        futures::future::join_all(spare).await;
        if let Some(mut child) = self.child.lock().await.take() {
            child.stop(Duration::from_secs(2)).await;
        }
        // Any Chromium still naming the profile directory (its launcher
        // outlived a killed chromedriver) goes too.
        kill_naming(self.dir.path());
    }

    /// The directory of the run's profiles.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// SIGKILLs every process that names `dir`.
fn kill_naming(dir: &Path) {
    for pid in crate::sweep::processes_naming(&[dir.to_owned()]) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// The end of what the Chromium of `profile` wrote (the launcher's log),
/// bounded: "nothing" when it wrote nothing, as when killed from outside.
fn said_at_start(profile: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 2000;
    let mut log = profile.as_os_str().to_owned();
    log.push(".log");
    let mut tail = Vec::new();
    if let Ok(mut file) = std::fs::File::open(&log) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(TAIL)));
        let _ = file.take(TAIL).read_to_end(&mut tail);
    }
    let text = String::from_utf8_lossy(&tail);
    match text.trim() {
        "" => "nothing".to_owned(),
        said => format!("`{}`", said.replace('\n', " | ")),
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// A browser: its WebDriver session (and that session's id), and the
/// profile its Chromium names.
#[derive(Clone)]
struct Seat {
    client: fantoccini::Client,
    id: String,
    profile: PathBuf,
}

/// One human's browser: a WebDriver session, started on first use.
pub struct Tab {
    driver: Arc<Driver>,
    seat: tokio::sync::OnceCell<Seat>,
    /// The current document's number: a form read from an older document is
    /// submitted as an attacker (or a stale tab) would, not by its button.
    doc: AtomicU64,
    /// One navigation at a time: a person has one tab, and scenarios that
    /// act concurrently in one browser take turns here.
    turn: tokio::sync::Mutex<()>,
    /// Set when a navigation failed: the browser may be stuck in a page
    /// that never ends loading, and is closed rather than wiped.
    spoiled: std::sync::atomic::AtomicBool,
    /// Set once a spoiled browser was asked for its picture.
    pictured: std::sync::atomic::AtomicBool,
    /// Every origin the browser showed a page of, wiped before its reuse.
    origins: std::sync::Mutex<Vec<String>>,
}

/// What the browser shows after a navigation.
pub struct Shown {
    /// The final answer's status (0 when the network log holds none).
    pub status: u16,
    /// The URL the browser shows.
    pub url: url::Url,
    /// The DOM, serialised (`outerHTML`).
    pub html: String,
    /// `document.body.innerText`.
    pub text: String,
    /// Every redirect followed, as `(status, target)`.
    pub redirects: Vec<(u16, url::Url)>,
    /// The document's number in this browser.
    pub doc: u64,
    /// `document.title`.
    pub title: String,
    /// Milliseconds from the navigation's start to the page read.
    pub elapsed_ms: u64,
    /// The value of every cookie the browser sent or was sent since the
    /// last page read (secrets: no `Debug`).
    pub cookies: Vec<String>,
}

/// A chromedriver command fantoccini has no method for.
#[derive(Debug)]
struct Raw {
    path: &'static str,
    body: Value,
}

impl WebDriverCompatibleCommand for Raw {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/{}", session.unwrap_or(""), self.path))
    }
    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}

/// WebDriver's Navigate To (fantoccini's `goto` first asks for the current
/// URL, to resolve a relative one: a command more per page).
async fn navigate(
    client: &fantoccini::Client,
    url: &url::Url,
) -> Result<Value, fantoccini::error::CmdError> {
    let body = json!({ "url": url.as_str() });
    client.issue_cmd(Raw { path: "url", body }).await
}

/// A Chrome DevTools command in `client`'s browser.
async fn cdp(
    client: &fantoccini::Client,
    cmd: &str,
    params: Value,
) -> Result<Value, fantoccini::error::CmdError> {
    let body = json!({"cmd": cmd, "params": params});
    client
        .issue_cmd(Raw {
            path: "goog/cdp/execute",
            body,
        })
        .await
}

fn browser_error(what: &str) -> impl Fn(fantoccini::error::CmdError) -> Abort + '_ {
    move |e| Abort::errored(format!("browser: {what}: {e}"))
}

impl Tab {
    /// A browser of `driver`'s, not started yet.
    pub fn new(driver: Arc<Driver>) -> Tab {
        Tab {
            driver,
            seat: tokio::sync::OnceCell::new(),
            doc: AtomicU64::new(0),
            turn: tokio::sync::Mutex::new(()),
            origins: Default::default(),
            spoiled: Default::default(),
            pictured: Default::default(),
        }
    }

    async fn seat(&self) -> Step<&Seat> {
        self.seat.get_or_try_init(|| self.driver.take()).await
    }

    async fn client(&self) -> Step<&fantoccini::Client> {
        Ok(&self.seat().await?.client)
    }

    /// Marks this browser as one not to use again after its human.
    fn spoil(&self) {
        self.spoiled.store(true, Ordering::SeqCst);
    }

    /// Whether a navigation of this browser failed.
    pub fn spoiled(&self) -> bool {
        self.spoiled.load(Ordering::SeqCst)
    }

    /// Whether a spoiled browser may still be asked for a picture: once.
    pub fn last_picture(&self) -> bool {
        !self.pictured.swap(true, Ordering::SeqCst)
    }

    /// The current document's number.
    pub fn doc(&self) -> u64 {
        self.doc.load(Ordering::SeqCst)
    }

    /// Runs a script in the page and returns its value.
    pub async fn script(&self, js: &str, args: Vec<Value>) -> Step<Value> {
        self.client()
            .await?
            .execute(js, args)
            .await
            .map_err(browser_error("running a script"))
    }

    /// A Chrome DevTools command (cookies as the browser holds them).
    pub async fn cdp(&self, cmd: &str, params: Value) -> Step<Value> {
        cdp(self.client().await?, cmd, params)
            .await
            .map_err(browser_error(cmd))
    }

    /// Every cookie the browser holds, as DevTools gives them (`name`,
    /// `value`, `domain`, `path`, `httpOnly`, `sameSite`, …).
    pub async fn cookies(&self) -> Step<Vec<Value>> {
        let all = self.cdp("Network.getAllCookies", json!({})).await?;
        Ok(all["cookies"].as_array().cloned().unwrap_or_default())
    }

    /// Replaces every cookie of the browser with `cookies` (DevTools form).
    pub async fn set_cookies(&self, cookies: Vec<Value>) -> Step<()> {
        self.cdp("Network.clearBrowserCookies", json!({})).await?;
        if !cookies.is_empty() {
            self.cdp("Network.setCookies", json!({ "cookies": cookies }))
                .await?;
        }
        Ok(())
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Step<Vec<u8>> {
        self.client()
            .await?
            .screenshot()
            .await
            .map_err(browser_error("screenshot"))
    }

    /// The browser's turn: no navigation runs while it is held (a move at
    /// the HTTP level with the browser's cookies, copied out and back).
    pub async fn hold(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// Opens `url` as typing it into the address bar does.
    pub async fn goto(&self, url: &url::Url) -> Step<Shown> {
        let _turn = self.turn.lock().await;
        self.open(url).await
    }

    async fn open(&self, url: &url::Url) -> Step<Shown> {
        self.navigating(async {
            let started = std::time::Instant::now();
            let client = self.client().await?;
            navigate(client, url)
                .await
                .map_err(|e| Abort::failed(format!("the browser could not open {url}: {e}")))?;
            self.shown_when(started, None).await
        })
        .await
    }

    /// One navigation, to the page read after it. A browser whose
    /// navigation failed is spoiled: its page may never end loading.
    async fn navigating(&self, go: impl Future<Output = Step<Shown>>) -> Step<Shown> {
        let shown = go.await;
        if shown.is_err() {
            self.spoil();
        }
        shown
    }

    /// Submits a form as a person does. One read from the page the browser
    /// shows (`dom`: that document's number and the form's place in it) is
    /// filled so that it sends `fields` — controls it does not send are
    /// disabled, values it lacks added as hidden inputs (an attacker editing
    /// the page) — and sent by clicking its submit button `button` (none: a
    /// person cannot submit it). Any other form (read from an older page, or
    /// built by hand) is built into a page of the action's origin with a
    /// button of its own, as an attacker's edit or a tab kept open would
    /// send it. The button's own pair is sent by the click.
    pub async fn submit(
        &self,
        dom: Option<(u64, usize)>,
        button: Option<usize>,
        method: &str,
        action: &url::Url,
        fields: &[(String, String)],
    ) -> Step<Shown> {
        let _turn = self.turn.lock().await;
        let list: Vec<Value> = fields.iter().map(|(n, v)| json!([n, v])).collect();
        let refused = |why: &str| {
            Abort::failed(format!(
                "the browser cannot submit the form to {}: {why}",
                action.path()
            ))
        };
        if let Some((doc, index)) = dom
            && doc == self.doc()
        {
            let fill = format!("{FILL}{CLICK_POINT}");
            let args = vec![json!(index), json!(button), Value::Array(list)];
            return self.click(&fill, args, refused).await;
        }
        let inject = format!("{INJECT}{CLICK_POINT}");
        let args = vec![json!(method), json!(action.as_str()), Value::Array(list)];
        let here = self.script(&inject, args.clone()).await?;
        if here != json!(ELSEWHERE) {
            return self.click_at(here, refused).await;
        }
        let root = action
            .join("/")
            .map_err(|e| Abort::errored(format!("{action}: {e}")))?;
        self.open(&root).await?;
        self.click(&inject, args, refused).await
    }

    /// Opens `url` (another site's page that navigates on its own) and
    /// waits until the browser shows a page of `origin`.
    pub async fn follow_to(&self, url: &url::Url, origin: &url::Origin) -> Step<Shown> {
        let _turn = self.turn.lock().await;
        self.navigating(async {
            let started = std::time::Instant::now();
            let client = self.client().await?;
            navigate(client, url)
                .await
                .map_err(|e| Abort::errored(format!("the browser could not open {url}: {e}")))?;
            let want = origin.ascii_serialization();
            let there = format!(
                "location.origin === {} && document.readyState === 'complete'",
                json!(want)
            );
            let late = format!("the page at {url} did not lead to {want}");
            self.shown_when(started, Some((&there, &late))).await
        })
        .await
    }

    /// Runs `prepare` (a script that marks a button and ends with
    /// [`CLICK_POINT`]) and clicks there; a reason it answers instead is
    /// `refused`.
    async fn click(
        &self,
        prepare: &str,
        args: Vec<Value>,
        refused: impl Fn(&str) -> Abort,
    ) -> Step<Shown> {
        let point = self.script(prepare, args).await?;
        self.click_at(point, refused).await
    }

    /// Clicks at `point` (`[x, y]` from [`CLICK_POINT`]) as a person's mouse
    /// does, through the browser's input (so what covers the button takes
    /// the click), and waits for the page the click leads to.
    async fn click_at(&self, point: Value, refused: impl Fn(&str) -> Abort) -> Step<Shown> {
        let (Some(x), Some(y)) = (point[0].as_f64(), point[1].as_f64()) else {
            return Err(refused(point.as_str().unwrap_or("?")));
        };
        self.navigating(async {
            let started = std::time::Instant::now();
            let client = self.client().await?;
            for (kind, button) in [
                ("mouseMoved", "none"),
                ("mousePressed", "left"),
                ("mouseReleased", "left"),
            ] {
                let event =
                    json!({"type": kind, "x": x, "y": y, "button": button, "clickCount": 1});
                cdp(client, "Input.dispatchMouseEvent", event)
                    .await
                    .map_err(|e| Abort::failed(format!("clicking the form's button: {e}")))?;
            }
            let new_page =
                "window.__grantgate_old === undefined && document.readyState === 'complete'";
            let late = "clicking the form's button led to no new page";
            self.shown_when(started, Some((new_page, late))).await
        })
        .await
    }

    /// The page the browser shows once `ready` (a JavaScript condition) is
    /// true, asked every 20 ms within [`PAGE_LOAD`] (else the step fails
    /// saying what did not happen, `ready`'s second part), with the status
    /// and redirects of the navigation that led to it (from the network
    /// log).
    async fn shown_when(
        &self,
        started: std::time::Instant,
        ready: Option<(&str, &str)>,
    ) -> Step<Shown> {
        let client = self.client().await?;
        // The page is bounded in the page, before WebDriver carries it here.
        let limit = crate::limits::body_limit();
        let read = match ready {
            Some((ready, _)) => format!("if (!({ready})) return null;{READ_PAGE}"),
            None => READ_PAGE.to_owned(),
        };
        let deadline = tokio::time::Instant::now() + PAGE_LOAD;
        let page = loop {
            // (An error, as during a navigation, is a not yet.)
            match client.execute(&read, vec![json!(limit)]).await {
                Ok(Value::Null) | Err(_) if ready.is_some() => {}
                answer => break answer.map_err(browser_error("reading the page"))?,
            }
            if let Some((_, late)) = ready
                && tokio::time::Instant::now() > deadline
            {
                return Err(Abort::failed(format!("{late} within {PAGE_LOAD:?}")));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let doc = self.doc.fetch_add(1, Ordering::SeqCst) + 1;
        if page.get(4).is_some() {
            return Err(Abort::failed(format!(
                "the page is larger than the harness's limit of {limit} characters (--max-body)"
            )));
        }
        let url: url::Url = page[3]
            .as_str()
            .and_then(|u| u.parse().ok())
            .ok_or_else(|| Abort::errored("browser: the page has no URL"))?;
        let part = |i: usize| page[i].as_str().unwrap_or("").to_owned();
        // The log since the last page read: this navigation is its last.
        let log = self.driver.network_log(self.seat().await?).await?;
        let (status, redirects) = navigation(&log);
        {
            let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            for seen in redirects.iter().map(|(_, u)| u).chain([&url]) {
                let origin = seen.origin().ascii_serialization();
                if seen.scheme().starts_with("http") && !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
        Ok(Shown {
            status: status.unwrap_or(0),
            url,
            html: part(0),
            text: part(1),
            redirects,
            doc,
            title: part(2),
            elapsed_ms: started.elapsed().as_millis() as u64,
            cookies: cookie_values(&log),
        })
    }
}

impl Drop for Tab {
    /// Its human is done with it (every copy gone): the driver wipes it
    /// for another human, or closes it.
    fn drop(&mut self) {
        let Some(seat) = self.seat.take() else { return };
        let runtime = tokio::runtime::Handle::try_current();
        if self.spoiled() || runtime.is_err() {
            // Its commands may each wait out a page load, and its page may
            // go on loading from the Core: its Chromium goes at once.
            kill_naming(&seat.profile);
            if let Ok(runtime) = runtime {
                runtime.spawn(seat.client.close());
            }
        } else {
            let origins =
                std::mem::take(&mut *self.origins.lock().unwrap_or_else(|e| e.into_inner()));
            self.driver.clone().give_back(seat, origins);
        }
    }
}

/// The final status and the redirects of the last document navigation in a
/// network log's events.
fn navigation(log: &[Value]) -> (Option<u16>, Vec<(u16, url::Url)>) {
    let mut status = None;
    let mut redirects = Vec::new();
    for event in log {
        let (method, params) = (&event["method"], &event["params"]);
        if params["type"] != "Document" {
            continue;
        }
        match method.as_str() {
            Some("Network.requestWillBeSent") => {
                let redirect = &params["redirectResponse"];
                if redirect.is_object() {
                    let to = params["request"]["url"]
                        .as_str()
                        .and_then(|u| u.parse().ok());
                    if let (Some(s), Some(to)) = (redirect["status"].as_u64(), to) {
                        redirects.push((s as u16, to));
                    }
                } else {
                    redirects.clear();
                    status = None;
                }
            }
            Some("Network.responseReceived") => {
                status = params["response"]["status"].as_u64().map(|s| s as u16);
            }
            _ => {}
        }
    }
    (status, redirects)
}

/// The values of the cookies in a network log's events: those the requests
/// carried and those the answers' `Set-Cookie` fields set (RFC 6265 §5.2:
/// the value runs from the first `=` to the first `;`, trimmed).
fn cookie_values(log: &[Value]) -> Vec<String> {
    let mut values = Vec::new();
    for event in log {
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Network.requestWillBeSentExtraInfo") => {
                let sent = params["associatedCookies"].as_array().into_iter().flatten();
                values
                    .extend(sent.filter_map(|c| c["cookie"]["value"].as_str().map(str::to_owned)));
            }
            Some("Network.responseReceivedExtraInfo") => {
                let headers = params["headers"].as_object().into_iter().flatten();
                let set = headers
                    .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))
                    .filter_map(|(_, v)| v.as_str());
                for line in set.flat_map(str::lines) {
                    // (A pair without `=` is all value.)
                    let pair = line.split(';').next().unwrap_or("");
                    let value = pair.split_once('=').map_or(pair, |(_, v)| v);
                    values.push(value.trim_matches([' ', '\t']).to_owned());
                }
            }
            _ => {}
        }
    }
    values.retain(|v| !v.is_empty());
    values.sort();
    values.dedup();
    values
}

/// The page shown: `[outerHTML, innerText, title, URL]`, or those four and
/// `true` when the HTML and text together exceed `arguments[0]` characters
/// (then both empty).
const READ_PAGE: &str = r#"
const html = document.documentElement ? document.documentElement.outerHTML : '';
const text = document.body ? document.body.innerText : '';
const title = document.title.slice(0, 4096);
if (html.length + text.length > arguments[0]) return ['', '', title, location.href, true];
return [html, text, title, location.href];
"#;

/// Fills form `arguments[0]` so that clicking its submit button
/// `arguments[1]` sends `arguments[2]`, and marks that button (then
/// [`CLICK_POINT`]); else why not.
const FILL: &str = r#"
const [index, button, want] = arguments;
const form = document.querySelectorAll('form')[index];
if (!form) return 'the form is gone from the page';
const submit = e => (e.localName === 'button' && !['reset', 'button'].includes((e.getAttribute('type') || '').toLowerCase()))
  || (e.localName === 'input' && ['submit', 'image'].includes(e.type));
const buttons = Array.from(form.elements).filter(e => submit(e) && !e.matches(':disabled'));
if (button === null || !buttons[button]) return 'it has no submit button inside it a person can click';
const clicked = buttons[button];
const rest = want.slice();
if (clicked.name) {
  for (let i = rest.length - 1; i >= 0; i--) {
    if (rest[i][0] === clicked.name && rest[i][1] === clicked.value) { rest.splice(i, 1); break; }
  }
}
for (const c of Array.from(form.elements)) {
  // Disabled controls send nothing and stay as they are.
  if (!c.name || submit(c) || c.matches(':disabled') || ['fieldset', 'output', 'object'].includes(c.localName)) continue;
  if (c.type === 'button' || c.type === 'reset') continue;
  const i = rest.findIndex(([n]) => n === c.name);
  if (i < 0) { c.disabled = true; continue; }
  const value = rest[i][1];
  if (c.type === 'checkbox' || c.type === 'radio') {
    if (c.value === value) { c.checked = true; rest.splice(i, 1); } else { c.checked = false; }
    continue;
  }
  rest.splice(i, 1);
  if (c.localName === 'select') {
    if (![...c.options].some(o => o.value === value)) { const o = document.createElement('option'); o.value = value; c.appendChild(o); }
    c.value = value;
  } else if (c.type === 'file') {
    c.disabled = true;
  } else {
    c.value = value;
  }
}
for (const [n, v] of rest) {
  const h = document.createElement('input');
  h.type = 'hidden'; h.name = n; h.value = v; form.appendChild(h);
}
clicked.setAttribute('data-grantgate-click', '');
"#;

/// Builds a form (`arguments`: method, action, fields) at the end of the
/// page with a button of its own, and marks that button (then
/// [`CLICK_POINT`]); [`ELSEWHERE`] when the page is not of the action's
/// origin.
const INJECT: &str = r#"
const [method, action, fields] = arguments;
if (location.origin !== new URL(action).origin) return 'the page shown is of another origin';
const form = document.createElement('form');
form.method = method; form.action = action;
for (const [n, v] of fields) {
  const h = document.createElement('input');
  h.type = 'hidden'; h.name = n; h.value = v; form.appendChild(h);
}
const b = document.createElement('button');
b.type = 'submit'; b.textContent = 'send';
b.setAttribute('data-grantgate-click', '');
form.appendChild(b);
(document.body || document.documentElement).appendChild(form);
"#;

/// What [`INJECT`] answers on a page of another origin than the form's.
const ELSEWHERE: &str = "the page shown is of another origin";

/// The marked element's in-view centre, scrolled into view, where a click
/// lands on the element itself (WebDriver's element click: one another
/// element covers is intercepted), as `[x, y]`; else why not. Marks the
/// page, so that the next one is told from it. The end of [`FILL`] and
/// [`INJECT`].
const CLICK_POINT: &str = r#"
const e = document.querySelector('[data-grantgate-click]');
if (!e) return 'it is gone from the page';
e.scrollIntoView({block: 'center', inline: 'center'});
const r = e.getClientRects()[0];
const left = r && Math.max(r.left, 0), right = r && Math.min(r.right, innerWidth);
const top = r && Math.max(r.top, 0), bottom = r && Math.min(r.bottom, innerHeight);
if (!r || right <= left || bottom <= top) return 'it is not shown';
const [x, y] = [(left + right) / 2, (top + bottom) / 2];
const hit = document.elementFromPoint(x, y);
if (!hit || !e.contains(hit)) return `<${hit ? hit.localName : 'nothing'}> covers it`;
window.__grantgate_old = true;
return [x, y];
"#;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, params: Value) -> Value {
        json!({"method": method, "params": params})
    }

    #[test]
    fn the_cookies_of_a_log_are_those_sent_and_those_set() {
        let log = [
            entry(
                "Network.requestWillBeSentExtraInfo",
                json!({"associatedCookies": [{"cookie": {"name": "sid", "value": "sent-1"}}]}),
            ),
            entry(
                "Network.responseReceivedExtraInfo",
                json!({"headers": {
                    "Content-Type": "text/html",
                    "set-Cookie": "a=set-2; HttpOnly\nb= \tset=3 ;Path=/\nnameless-4\nc=; Max-Age=0",
                }}),
            ),
            entry(
                "Network.requestWillBeSent",
                json!({"request": {"headers": {"Cookie": "x=y"}}}),
            ),
        ];
        assert_eq!(
            cookie_values(&log),
            ["nameless-4", "sent-1", "set-2", "set=3"]
        );
    }

    /// To the next human a wiped browser is a fresh one: on no page, with no
    /// cookie and nothing stored by the site its last human saw.
    #[tokio::test]
    async fn a_reused_browser_keeps_nothing_of_its_last_human() {
        crate::chromium::chromium(); // fails naming the install command
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route(
                "/",
                axum::routing::get(|| async {
                    (
                        [(http::header::SET_COOKIE, "sid=alice; Path=/; HttpOnly")],
                        axum::response::Html(
                            "<script>localStorage.setItem('who', 'alice')</script><p>hi</p>",
                        ),
                    )
                }),
            )
            .route(
                "/plain",
                axum::routing::get(|| async { axum::response::Html("<p>plain</p>") }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let driver = Driver::start().await.unwrap();

        let seat = driver.session().await.unwrap();
        let id = seat.client.session_id().await.unwrap();
        assert_eq!(id.as_deref(), Some(seat.id.as_str()));
        let alice = Tab::new(driver.clone());
        let _ = alice.seat.set(seat);
        alice
            .goto(&format!("{site}/").parse().unwrap())
            .await
            .unwrap();
        let stored = "return localStorage.getItem('who');";
        assert_eq!(alice.script(stored, vec![]).await.unwrap(), json!("alice"));
        assert_eq!(alice.cookies().await.unwrap().len(), 1);
        drop(alice);

        let again = loop {
            let seat = driver
                .spare_or_returned()
                .await
                .expect("the wiped browser is kept");
            if Some(&seat.id) == id.as_ref() {
                break seat;
            }
        };
        let bob = Tab::new(driver.clone());
        let _ = bob.seat.set(again);
        let here = bob.script("return location.href;", vec![]).await.unwrap();
        assert_eq!(here, json!("about:blank"));
        assert_eq!(bob.cookies().await.unwrap(), Vec::<Value>::new());
        bob.goto(&format!("{site}/plain").parse().unwrap())
            .await
            .unwrap();
        assert_eq!(bob.script(stored, vec![]).await.unwrap(), Value::Null);
        drop(bob);
        driver.stop().await;
    }

    /// A Chromium that exits at its start fails the step with what it said
    /// (chromedriver itself only says "Chrome instance exited").
    #[tokio::test]
    async fn a_chromium_that_cannot_start_is_named_with_what_it_said() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("chromium");
        std::fs::write(
            &fake,
            "#!/bin/sh\ncase \"$1\" in --version) echo Chromium 1.0;; \
             *) echo 'FATAL: no room for a zygote' >&2; exit 1;; esac\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let chromedriver = find("GRANTGATE_CHROMEDRIVER", &["chromedriver"]).unwrap();
        let driver = Driver::start_with(fake, chromedriver).await.unwrap();
        let failed = driver.session().await.err().expect("no browser");
        let text = failed.to_string();
        assert!(
            text.contains("Chromium said: `FATAL: no room for a zygote`"),
            "{text}"
        );
        driver.stop().await;
    }

    /// chromedriver's port-0 race (it exits saying the port is not
    /// available) costs a fresh start, not the run.
    #[tokio::test]
    async fn a_chromedriver_losing_its_port_race_is_started_again() {
        crate::chromium::chromium(); // fails naming the install command
        let real = find("GRANTGATE_CHROMEDRIVER", &["chromedriver"]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("chromedriver");
        let lost = dir.path().join("lost");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh
if [ ! -e {lost} ]; then touch {lost}; \
                 echo 'IPv4 port not available. Exiting...'; exit 1; fi
exec {real} \"$@\"
",
                lost = shell_quote(&lost),
                real = shell_quote(&real),
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let chromium = crate::chromium::find_chromium().unwrap();
        let driver = Driver::start_with(chromium, fake).await.unwrap();
        assert!(lost.exists(), "the first start lost the race");
        driver.stop().await;
    }

    /// Serves `page` at `/`, opens it in a fresh browser and expects the
    /// step refused saying `why`; returns the driver and the browser.
    async fn refused_page(page: String, why: &str) -> (Arc<Driver>, Tab) {
        crate::chromium::chromium(); // fails naming the install command
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = format!("http://{}/", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(move || async move { axum::response::Html(page) }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let driver = Driver::start().await.unwrap();
        let tab = Tab::new(driver.clone());
        let refused = tab
            .goto(&site.parse().unwrap())
            .await
            .err()
            .expect("refused");
        assert!(refused.to_string().contains(why), "{refused}");
        (driver, tab)
    }

    /// A page whose requests outgrow the network log's bound fails its step
    /// without the log being read, and its browser is killed, not reused.
    #[tokio::test]
    async fn a_page_making_requests_without_end_fails_and_its_browser_goes() {
        // 400 images of 32 KiB URLs: each URL is in several log entries.
        let page = "<p>flood</p><script>const pad = 'x'.repeat(32768); \
                    for (let i = 0; i < 400; i++) new Image().src = '/i/' + i + '?' + pad;</script>";
        let (driver, tab) = refused_page(page.into(), "more requests than the harness reads").await;
        assert!(tab.spoiled());
        let profile = tab.seat.get().unwrap().profile.clone();
        let alive = || !crate::sweep::processes_naming(std::slice::from_ref(&profile)).is_empty();
        assert!(alive());
        drop(tab);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive() {
            assert!(
                std::time::Instant::now() < deadline,
                "its Chromium lives on"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        driver.stop().await;
    }

    /// A page whose DOM outgrows the harness's body limit fails the step
    /// in the page: it is never carried to the harness whole.
    #[tokio::test]
    async fn a_page_over_the_body_limit_is_refused_unread() {
        let over = crate::limits::DEFAULT_BODY_LIMIT + 1;
        let page = format!(
            "<p id=p></p><script>document.getElementById('p').textContent = 'x'.repeat({over})</script>"
        );
        let (driver, _tab) = refused_page(page, "larger than the harness's limit").await;
        driver.stop().await;
    }
}
