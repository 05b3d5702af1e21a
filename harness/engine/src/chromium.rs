//! Finding Chromium: for `--browser chromium` ([`crate::browser`]) and for
//! the tests that check what a real browser makes of a page (the HTML
//! report, page text).
//!
//! Chromium is a test dependency from Debian's packages (`.ci/run` installs
//! it). Without it these tests fail, naming the install command: a browser
//! check that silently skips is no check.

#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;
#[cfg(test)]
use std::process::Command;

#[cfg(test)]
/// Chromium's binary, as [`find_chromium`] finds it.
pub fn chromium() -> PathBuf {
    find_chromium().unwrap_or_else(|| {
        panic!(
            "Chromium is needed to check pages in a real browser and is not installed: \
             run `apt-get install -y chromium chromium-headless-shell` (Debian), or set GRANTGATE_CHROMIUM to its binary"
        )
    })
}

/// Chromium's binary (`$GRANTGATE_CHROMIUM`, else `chromium-headless-shell`,
/// `chromium` or `chromium-browser` on `PATH`), or `None`. The headless
/// shell is Chromium's own headless build (the same engine, cookie rules and
/// DevTools, without the desktop browser around them): it starts in a third
/// of the time, which is most of what a human in a browser costs.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GRANTGATE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let names = ["chromium-headless-shell", "chromium", "chromium-browser"];
    let found = names
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |dir| dir.join(n)))
        .find(|p| p.is_file())?;
    // Debian's `chromium-headless-shell` is a script that runs the binary
    // in `../lib/chromium/` without `exec`: a death signal set for the
    // script (`setpriv --pdeathsig`, crate::browser) would not reach the
    // browser, which would outlive a killed harness. Take the binary.
    let name = found.file_name()?;
    let binary = found.parent()?.parent()?.join("lib/chromium").join(name);
    Some(if binary.is_file() { binary } else { found })
}

/// The DOM Chromium builds from the file `page` (its scripts run), as
/// `--dump-dom` serialises it; `profile` is a fresh directory for its
/// profile.
#[cfg(test)]
pub fn dump_dom(page: &Path, profile: &Path) -> String {
    let browser = chromium();
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("could not start {browser:?}: {e}"));
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && dom.contains("</html>"),
        "{browser:?} did not render {page:?} ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    dom
}
