//! [`Page::text`] against a real browser: each page below is loaded in
//! headless Chromium, whose `document.body.innerText` must read as our text
//! once runs of whitespace are one space (all [`Page::text`] promises).

use scraper::{Html, Selector};

use super::{Page, normalise};
use crate::chromium::dump_dom;

/// Pages as Cores write them: inline markup inside words, entities, blocks,
/// tables, lists, what is not rendered, form controls, deep wrappers.
const PAGES: [&str; 8] = [
    // A grant page with markup inside every word (the `inline-markup` variant).
    r#"<!DOCTYPE html><html><head><title>Grant #3 - core</title><style>.w{color:red}</style></head><body>
<header><a href="/">core</a> <span class="signed-in-user">al<wbr>ice</span></header>
<main><h1>Agent work grant <span>#</span>3</h1><dl class="grant">
<dt>State</dt><dd class="grant-state"><span class="w">i</span>ssue&#95;<wbr>deleted</dd>
<dt>Agent</dt><dd>lab<b>-</b>bot</dd></dl>
<table class="receipts"><tr><th>Request key</th><th>Status</th></tr>
<tr><td class="receipt-key">9a14f868-<wbr>4ea0-4b1c-9d2e-<span>0c1d2e3f4a5b</span></td><td>sub<wbr>mitted</td></tr></table>
<p class="issue-grant">via <a href="/g/7">agent</a> work grant #<code>7</code></p></main></body></html>"#,
    // Whitespace, entities and line breaks.
    "<body>  lead\n\t<b>bold</b>   tail &amp; &lt;x&gt; &#95;&#x5f; a&nbsp;b<br>after&nbsp;<br><br>x \
     <pre>  keep\n   lines </pre><em>e</em><i>i</i><u>u</u>  </body>",
    // Blocks and inline boundaries.
    "<body><div>one</div><div>two<span>three</span></div><p>para</p>gr<p>ap</p>h<h1>H</h1><h2>two</h2>\
     <section><article>art</article></section><nav>nav</nav><footer>f</footer>x<hr>y\
     <blockquote>q</blockquote><address>ad</address><figure><figcaption>cap</figcaption></figure></body>",
    // Tables and lists.
    "<body><table><caption>Cap</caption><thead><tr><th>A</th><th>B</th></tr></thead>\
     <tbody><tr><td>1</td><td>2<span>3</span></td></tr><tr><td>x</td></tr></tbody></table>\
     <ul><li>l1</li><li>l<b>2</b></li></ul><ol><li>o1</li></ol><dl><dt>t</dt><dd>d</dd></dl></body>",
    // What is not rendered.
    "<body>a<script>no()</script>b<style>p{}</style>c<template>no</template>d<p hidden>no</p>e\
     <input type=hidden value=no>f<input value=no><textarea>no</textarea>g<noscript>no</noscript>\
     <details><summary>sum</summary>no</details><details open><summary>s2</summary>yes</details>\
     <dialog>no</dialog><dialog open>dlg</dialog><img alt=no src=x.png><iframe>no</iframe>\
     <span hidden>no</span>h<datalist><option>no</option></datalist></body>",
    // Forms as a person sees them.
    "<body><form action=/a><label>User<wbr>name <input name=u></label><fieldset><legend>Leg</legend>\
     <select name=s><option>A1</option><optgroup label=G><option>B1</option></optgroup></select></fieldset>\
     <button>Sign<span>in</span></button><input type=submit value=Sub><button type=button>Btn</button>\
     </form></body>",
    // Deep wrappers of inline and block elements.
    "<body><div><main><section><div><div><span><span><b>in</b></span>ner</span></div></div></section></main>\
     </div><div><div>a</div></div>b<span><div>block in inline</div></span>c</body>",
    // Other inline elements.
    "<body><abbr>ab</abbr><small>sm</small><strong>st</strong><time>ti</time><mark>ma</mark><kbd>k</kbd>\
     <samp>s</samp><var>v</var><sub>1</sub><sup>2</sup><s>x</s><del>d</del><ins>i</ins><q>q</q>\
     <bdi>b</bdi><bdo dir=ltr>o</bdo><cite>c</cite><dfn>f</dfn><data value=1>da</data><label>l</label>\
     <ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby><output>out</output><font>ft</font><nobr>nb</nobr></body>",
];

/// `document.body.innerText` of `html` in Chromium.
fn chromium_inner_text(html: &str, dir: &std::path::Path, n: usize) -> String {
    let file = dir.join(format!("page-{n}.html"));
    let script = "<script>document.documentElement.setAttribute('data-inner-text', \
                  document.body.innerText)</script>";
    std::fs::write(&file, format!("{html}{script}")).unwrap();
    let dom = dump_dom(&file, &dir.join(format!("profile-{n}")));
    let sel = Selector::parse("html").unwrap();
    Html::parse_document(&dom)
        .select(&sel)
        .next()
        .and_then(|h| h.value().attr("data-inner-text"))
        .unwrap_or_else(|| panic!("Chromium wrote no innerText for page {n}:\n{dom}"))
        .to_owned()
}

#[test]
fn page_text_reads_as_chromiums_inner_text() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let browser: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = PAGES
            .iter()
            .enumerate()
            .map(|(n, html)| s.spawn(move || chromium_inner_text(html, dir, n)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (n, (html, inner)) in PAGES.iter().zip(browser).enumerate() {
        let page = Page {
            status: 200,
            url: "http://127.0.0.1:9/".parse().unwrap(),
            html: (*html).into(),
            redirects: vec![],
            inner_text: None,
            doc: None,
        };
        assert_eq!(page.text(), normalise(&inner), "page {n}: {html}");
    }
}
