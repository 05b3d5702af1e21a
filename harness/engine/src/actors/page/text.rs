//! The text a person reads on a page: what a browser's `innerText` of the
//! document gives with the UA style sheet alone. Inline elements (`<b>`,
//! `<span>`, `<a>`, `<code>`, `<wbr>` …) do not split words; block
//! elements, table cells and `<br>` separate; what is not rendered
//! (`<head>`, `<script>`, `<style>`, `<template>`, the `hidden` attribute,
//! inputs and textareas, a closed `<details>` but its summary) gives
//! nothing. Whitespace is left for the caller to collapse. Not modelled: a
//! page's own CSS (`display`, `text-transform`), which the contract does not
//! let a Core use to hide or change what it states.

use scraper::{ElementRef, Html, Node};

/// Elements whose content is not rendered (the UA style sheet's
/// `display: none`, replaced elements and form controls whose text
/// `innerText` does not give).
const NOT_RENDERED: [&str; 25] = [
    "head", "script", "style", "template", "title", "meta", "link", "base", "noscript", "noembed",
    "noframes", "param", "rp", "area", "datalist", "input", "textarea", "iframe", "object",
    "embed", "video", "audio", "canvas", "img", "svg",
];

/// Elements a browser lays out as blocks (or list items, tables, captions,
/// rows; a select's options and groups, as HTML's `innerText` says): each
/// starts and ends a line.
const BLOCK: [&str; 42] = [
    "html",
    "body",
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "caption",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "legend",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "search",
    "section",
    "summary",
    "tr",
];
const MORE_BLOCKS: [&str; 6] = ["table", "ul", "xmp", "plaintext", "option", "optgroup"];

/// A node to read, or the separator that closes an element read.
enum Step<N> {
    Enter(N),
    Leave(&'static str),
}

/// The document's rendered text (`innerText`), whitespace not collapsed.
/// Walks the tree with an explicit stack: no recursion, whatever the depth.
pub(super) fn inner_text(doc: &Html) -> String {
    let mut out = String::new();
    let mut stack = vec![Step::Enter(doc.tree.root())];
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Leave(sep) => {
                out.push_str(sep);
                continue;
            }
            Step::Enter(node) => node,
        };
        let children: Vec<_> = match node.value() {
            Node::Text(text) => {
                out.push_str(text);
                continue;
            }
            Node::Document | Node::Fragment => node.children().collect(),
            Node::Element(e) => {
                let name = e.name();
                if NOT_RENDERED.contains(&name)
                    || e.attr("hidden").is_some()
                    || (name == "dialog" && e.attr("open").is_none())
                {
                    continue;
                }
                let sep = match name {
                    "br" => {
                        out.push('\n');
                        continue;
                    }
                    "td" | "th" => "\t",
                    _ if BLOCK.contains(&name) || MORE_BLOCKS.contains(&name) => "\n",
                    _ => "",
                };
                out.push_str(sep);
                stack.push(Step::Leave(sep));
                // A closed details shows only its first summary.
                if name == "details" && e.attr("open").is_none() {
                    node.children()
                        .filter(|c| {
                            ElementRef::wrap(*c).is_some_and(|s| s.value().name() == "summary")
                        })
                        .take(1)
                        .collect()
                } else {
                    node.children().collect()
                }
            }
            _ => continue,
        };
        stack.extend(children.into_iter().rev().map(Step::Enter));
    }
    out
}
