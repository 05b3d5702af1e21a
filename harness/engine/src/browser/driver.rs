//! The run's chromedriver and its pool of browsers: each started ahead of
//! need (a Chromium takes a second or more to start), handed to one human,
//! then wiped of all a site can observe and handed to the next.

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
pub(super) const PAGE_LOAD: Duration = Duration::from_secs(15);

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
        let parent = child
            .pid()
            .ok_or_else(|| HarnessError::process("browser", "chromedriver exited as it started"))?;
        let launcher = write_launcher(dir.path(), &setpriv, &chromium, parent)
            .map_err(|e| HarnessError::process("browser", format!("browser launcher: {e}")))?;
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
    pub(super) async fn take(self: &Arc<Self>) -> Step<Seat> {
        let ready = self.spare_or_returned().await;
        self.start_ahead().await;
        match ready {
            Some(seat) => Ok(seat),
            None => self.session().await,
        }
    }

    /// A browser from `spare`, waiting for those being wiped; `None` when
    /// there is none and none is coming.
    pub(super) async fn spare_or_returned(&self) -> Option<Seat> {
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
    pub(super) async fn session(&self) -> Step<Seat> {
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
    pub(super) fn give_back(self: Arc<Self>, seat: Seat, origins: Vec<String>) {
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
    pub(super) async fn network_log(&self, seat: &Seat) -> Step<Vec<Value>> {
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
pub(super) fn kill_naming(dir: &Path) {
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

/// Writes the script chromedriver starts as Chromium, in `dir`; returns its
/// path. Chromium dies with chromedriver, however chromedriver dies. Its
/// first tab is blank: given no URL (chromedriver gives none), it opens the
/// new-tab page, hundreds of requests that starve a dozen browsers. What it
/// says goes to `<profile>.log` (chromedriver discards it), for a start that
/// fails; only fatal messages (chromedriver asks for all, the last
/// `--log-level` counts), so no page can fill the file.
///
/// chromedriver (pid `parent`) may die before setpriv asks for the signal (a
/// killed harness kills it at once, spares may be starting): the signal then
/// never comes, so Chromium starts only while its parent is still that
/// chromedriver (as `lifeline::tie` checks for the harness).
fn write_launcher(
    dir: &Path,
    setpriv: &Path,
    chromium: &Path,
    parent: i32,
) -> std::io::Result<PathBuf> {
    let launcher = dir.join("chromium");
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\n\
             for a; do case $a in --user-data-dir=*) log=\"${{a#--user-data-dir=}}.log\";; esac; done\n\
             exec 2>>\"${{log:-/dev/null}}\"\n\
             exec {} --pdeathsig KILL -- /bin/sh -c '[ \"$PPID\" = {parent} ] && exec \"$@\"' sh \
             {} \"$@\" --log-level=3 about:blank\n",
            shell_quote(setpriv),
            shell_quote(chromium)
        ),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))?;
    Ok(launcher)
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// A browser: its WebDriver session (and that session's id), and the
/// profile its Chromium names.
#[derive(Clone)]
pub(super) struct Seat {
    pub(super) client: fantoccini::Client,
    pub(super) id: String,
    pub(super) profile: PathBuf,
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
pub(super) async fn navigate(
    client: &fantoccini::Client,
    url: &url::Url,
) -> Result<Value, fantoccini::error::CmdError> {
    let body = json!({ "url": url.as_str() });
    client.issue_cmd(Raw { path: "url", body }).await
}

/// A Chrome DevTools command in `client`'s browser.
pub(super) async fn cdp(
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Chromium starts only under the chromedriver the launcher was written
    /// for: one whose chromedriver died (its parent is another process now)
    /// would never get the death signal.
    #[test]
    fn the_launcher_starts_chromium_only_under_its_chromedriver() {
        let setpriv = find("GRANTGATE_SETPRIV", &["setpriv"]).expect("setpriv (util-linux)");
        let dir = tempfile::tempdir().unwrap();
        let started = dir.path().join("started");
        let fake = dir.path().join("fake-chromium");
        std::fs::write(
            &fake,
            format!("#!/bin/sh\necho \"$@\" > {}\n", shell_quote(&started)),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = |parent: i32| {
            let launcher = write_launcher(dir.path(), &setpriv, &fake, parent).unwrap();
            std::process::Command::new(launcher)
                .arg("--headless")
                .status()
                .unwrap()
        };
        // Its parent here is this process: not the one it was written for.
        assert!(!run(1).success());
        assert!(!started.exists(), "Chromium started under another parent");
        assert!(run(std::process::id() as i32).success());
        let args = std::fs::read_to_string(&started).unwrap();
        assert_eq!(args.trim(), "--headless --log-level=3 about:blank");
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
}
