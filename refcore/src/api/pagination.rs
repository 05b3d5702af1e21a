//! `X-Total-Count` and RFC 8288 `Link` headers for paged lists.

use axum::http::{HeaderMap, HeaderValue};

use crate::faults::fault;

/// Headers for page `page` of `total` items at `limit` per page; `path` is
/// the absolute URL of the list and `keep` the query parameters to repeat.
pub fn headers(path: &str, keep: &[(&str, &str)], page: i64, limit: i64, total: i64) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert("x-total-count", HeaderValue::from(total));
    // (Both conditions are the constant `false` in a default build.)
    #[allow(clippy::ifs_same_cond)]
    let round_up = if fault!(LinkLastOvercounts) {
        limit + 1
    } else if fault!(LinkLastPastFullPage) {
        limit
    } else {
        limit - 1
    };
    let last = if fault!(LinkWrong) {
        total / limit
    } else {
        (total + round_up) / limit
    }
    .max(1);
    let url = |p: i64| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in keep {
            query.append_pair(k, v);
        }
        query.append_pair("page", &p.to_string());
        query.append_pair("limit", &limit.to_string());
        format!("{path}?{}", query.finish())
    };
    let mut links = Vec::new();
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", url(page + 1)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url((page - 1).min(last))));
    }
    links.push(format!("<{}>; rel=\"first\"", url(1)));
    links.push(format!("<{}>; rel=\"last\"", url(last)));
    if let Ok(value) = HeaderValue::from_str(&links.join(", "))
        && !fault!(LinkMissing)
    {
        map.insert("link", value);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::headers;

    #[test]
    fn links_follow_the_page() {
        let h = headers(
            "http://x/api/v1/agent-work-grants",
            &[("state", "all")],
            1,
            30,
            31,
        );
        assert_eq!(h["x-total-count"], "31");
        let link = h["link"].to_str().unwrap();
        assert!(link.contains(
            "<http://x/api/v1/agent-work-grants?state=all&page=2&limit=30>; rel=\"next\""
        ));
        assert!(!link.contains("rel=\"prev\""));
        assert!(link.contains("page=2&limit=30>; rel=\"last\""));
        let h = headers("http://x/l", &[], 2, 30, 31);
        let link = h["link"].to_str().unwrap();
        assert!(!link.contains("rel=\"next\""));
        assert!(link.contains("<http://x/l?page=1&limit=30>; rel=\"prev\""));
        let h = headers("http://x/l", &[], 1, 50, 0);
        assert!(
            h["link"]
                .to_str()
                .unwrap()
                .contains("page=1&limit=50>; rel=\"last\"")
        );
    }
}
