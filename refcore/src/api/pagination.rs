//! `X-Total-Count` and RFC 8288 `Link` headers for paged lists.

use axum::http::{HeaderMap, HeaderValue};

/// Headers for page `page` of `total` items at `limit` per page; `path` is
/// the absolute URL of the list and `keep` the query parameters to repeat.
pub fn headers(path: &str, keep: &[(&str, &str)], page: i64, limit: i64, total: i64) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert("x-total-count", HeaderValue::from(total));
    let link = link(path, keep, page, limit, last_page(total, limit));
    if let Ok(value) = HeaderValue::from_str(&link) {
        map.insert("link", value);
    }
    map
}

/// The last page of `total` items at `limit` per page; 1 when there are none.
pub fn last_page(total: i64, limit: i64) -> i64 {
    ((total + limit - 1) / limit).max(1)
}

/// The `Link` value of page `page` of `last` (see [`headers`]).
pub fn link(path: &str, keep: &[(&str, &str)], page: i64, limit: i64, last: i64) -> String {
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
    links.join(", ")
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
