//! `link-extra`: the grant list's `Link` written as another Core may write
//! it (RFC 8288, RFC 9110 §5.3, spec §3 List): one field line per target,
//! relations that share a target in one `rel="first prev"`, a `self` link,
//! `title` and `type` parameters (a title holding `<`, `>`, `;`, `,`, `=`
//! and an escaped quote: RFC 9110 §5.6.4), empty list elements, query
//! parameters in another order; and paging headers the contract does not
//! name next to `X-Total-Count`.

/// The links of a `Link` value refcore writes (`<url>; rel="r", …`), as
/// `(url, rel)`.
pub fn parse(value: &str) -> Vec<(String, String)> {
    value
        .split(", ")
        .filter_map(|part| {
            let (url, params) = part.strip_prefix('<')?.split_once('>')?;
            let rel = params.trim_start_matches(';').trim().strip_prefix("rel=")?;
            Some((url.to_string(), rel.trim_matches('"').to_string()))
        })
        .collect()
}

/// The field lines of `link-extra` for refcore's `value`, on a page whose
/// own absolute URL is `self_url`: `self` first, then one line per distinct
/// target (relations joined, `last` written `LAST`), last target first,
/// each with `sort=id` and its query parameters reversed, a `title` that
/// reads like a link of its own, and two empty list elements after it.
pub fn extra(value: &str, self_url: &str) -> Vec<String> {
    let mut targets: Vec<(String, Vec<String>)> = Vec::new();
    for (url, rel) in parse(value) {
        match targets.iter_mut().find(|(u, _)| *u == url) {
            Some((_, rels)) => rels.push(rel),
            None => targets.push((url, vec![rel])),
        }
    }
    let mut lines = vec![format!(
        "<{}>; rel=\"self\"; type=\"application/json\"",
        reverse_query(self_url)
    )];
    for (url, rels) in targets.iter().rev() {
        let types: Vec<String> = rels
            .iter()
            .map(|r| {
                if r == "last" {
                    r.to_uppercase()
                } else {
                    r.clone()
                }
            })
            .collect();
        lines.push(format!(
            "<{}>; title=\"{}, page <1>; rel=\\\"next\\\"\"; rel=\"{}\" , ,",
            reverse_query(&format!("{url}&sort=id")),
            rels.join(" and "),
            types.join(" ")
        ));
    }
    lines
}

/// `link-forgejo`: `Link` as Forgejo writes it (spec §3 allows it): no
/// `first` (nor `prev`) on the first page, no `last` on the last, and no
/// `Link` at all on a single page (`None`).
pub fn forgejo(value: &str) -> Option<String> {
    let links = parse(value);
    let has = |rel: &str| links.iter().any(|(_, r)| r == rel);
    let (first_page, last_page) = (!has("prev"), !has("next"));
    let kept: Vec<String> = (links.iter())
        .filter(|(_, rel)| match rel.as_str() {
            "first" | "prev" => !first_page,
            "last" => !last_page,
            _ => true,
        })
        .map(|(url, rel)| format!("<{url}>; rel=\"{rel}\""))
        .collect();
    (!kept.is_empty()).then(|| kept.join(", "))
}

/// `url` with its query parameters in reverse order.
fn reverse_query(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let mut pairs: Vec<&str> = query.split('&').collect();
    pairs.reverse();
    format!("{base}?{}", pairs.join("&"))
}

/// `link-style`: relations in the order last, first, prev, next; `next` and
/// `prev` as unquoted tokens with no space before `rel` (RFC 8288 allows
/// both), `first` and `last` under the parameter name `Rel` (names compare
/// case-insensitively, RFC 8288 §3); empty list elements before, between and after the links, which a
/// recipient ignores (RFC 9110 §5.6.1.2). Parameters other than `rel` do
/// not occur in refcore's `Link`.
pub fn restyle(value: &str) -> String {
    let links = parse(value);
    ["last", "first", "prev", "next"]
        .iter()
        .filter_map(|want| links.iter().find(|(_, rel)| rel == want))
        .map(|(url, rel)| match rel.as_str() {
            "prev" | "next" => format!("<{url}>;rel={rel}"),
            _ => format!("<{url}>; Rel=\"{rel}\""),
        })
        .map(|link| format!(" ,{link} ,"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_is_reordered_with_unquoted_tokens() {
        let link = "<http://x/l?page=2&limit=30>; rel=\"next\", <http://x/l?page=1&limit=30>; \
                    rel=\"first\", <http://x/l?page=2&limit=30>; rel=\"last\"";
        assert_eq!(
            restyle(link),
            " ,<http://x/l?page=2&limit=30>; Rel=\"last\" ,, ,<http://x/l?page=1&limit=30>; \
             Rel=\"first\" ,, ,<http://x/l?page=2&limit=30>;rel=next ,"
        );
    }

    #[test]
    fn forgejo_leaves_out_first_on_the_first_page_and_last_on_the_last() {
        let (p1, p2) = ("<http://x/l?page=1>", "<http://x/l?page=2>");
        let first = format!("{p2}; rel=\"next\", {p1}; rel=\"first\", {p2}; rel=\"last\"");
        assert_eq!(
            forgejo(&first).unwrap(),
            format!("{p2}; rel=\"next\", {p2}; rel=\"last\"")
        );
        let last = format!("{p1}; rel=\"first\", {p1}; rel=\"prev\", {p2}; rel=\"last\"");
        assert_eq!(
            forgejo(&last).unwrap(),
            format!("{p1}; rel=\"first\", {p1}; rel=\"prev\"")
        );
        let only = format!("{p1}; rel=\"first\", {p1}; rel=\"last\"");
        assert_eq!(forgejo(&only), None, "no Link on a single page");
    }

    #[test]
    fn extra_joins_shared_targets_and_adds_self() {
        let link = "<http://x/l?page=1&limit=30>; rel=\"prev\", <http://x/l?page=1&limit=30>; \
                    rel=\"first\", <http://x/l?page=2&limit=30>; rel=\"last\"";
        assert_eq!(
            extra(link, "http://x/l?page=2&limit=30"),
            vec![
                "<http://x/l?limit=30&page=2>; rel=\"self\"; type=\"application/json\"",
                "<http://x/l?sort=id&limit=30&page=2>; title=\"last, page <1>; rel=\\\"next\\\"\"; rel=\"LAST\" , ,",
                "<http://x/l?sort=id&limit=30&page=1>; title=\"prev and first, page <1>; rel=\\\"next\\\"\"; rel=\"prev first\" , ,",
            ]
        );
    }
}
