//! The approval webhook's transport: one HTTP/1.1 POST with hyper's connection-level
//! client over a tokio `TcpStream`, with a deadline over the whole exchange.
//!
//! hyper is already in the build (axum serves HTTP with it); its `client::conn` API
//! adds one request shape and nothing else: no pool, no TLS stack, no redirects, so
//! the one component whose job is to be auditable stays small. Only `http://` URLs are
//! supported; the server refuses to start with an `https://` webhook rather than send
//! approvals somewhere it cannot reach (put a local relay in front of an HTTPS
//! endpoint). Answers are bounded (64 KiB).
//!
//! Deciding what an answer means is not done here: see `safety::webhook_verdict`.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::header::{ACCEPT, CONNECTION, CONTENT_TYPE, HOST, USER_AGENT};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Largest webhook answer read.
const MAX_ANSWER: usize = 64 * 1024;

pub(crate) use crate::config::WebhookUrl;

/// POST `body` as JSON; the status and body of the answer, or why there is none.
pub(crate) async fn post_json(
    url: &WebhookUrl,
    body: &[u8],
    timeout: Duration,
) -> Result<(u16, Vec<u8>), String> {
    match tokio::time::timeout(timeout, exchange(url, body)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the approval webhook did not answer within {} ms",
            timeout.as_millis()
        )),
    }
}

async fn exchange(url: &WebhookUrl, body: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let stream = TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("the approval webhook is unreachable ({})", e.kind()))?;
    let failed = |e: hyper::Error| {
        if e.is_parse() || e.is_parse_status() || e.is_parse_too_large() {
            "the approval webhook did not answer HTTP".to_string()
        } else if e.is_incomplete_message() || e.is_closed() || e.is_canceled() {
            "the approval webhook closed before answering".to_string()
        } else {
            format!("the approval webhook connection failed ({e})")
        }
    };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(failed)?;
    // The connection task moves bytes while the request is sent and the answer read;
    // it ends with the exchange (Connection: close) and is aborted if we return early.
    let conn = tokio::spawn(conn);
    let _abort = AbortOnDrop(conn.abort_handle());
    let request = hyper::Request::post(url.path.as_str())
        .header(HOST, url.host_header())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .header(USER_AGENT, concat!("godot-mcp/", env!("CARGO_PKG_VERSION")))
        .header(CONNECTION, "close")
        .body(Full::new(Bytes::copy_from_slice(body)))
        .map_err(|e| format!("the approval webhook request could not be built ({e})"))?;
    let answer = sender.send_request(request).await.map_err(failed)?;
    let status = answer.status().as_u16();
    let body = Limited::new(answer.into_body(), MAX_ANSWER)
        .collect()
        .await
        .map_err(|e| match e.downcast::<hyper::Error>() {
            Ok(e) => failed(*e),
            Err(_) => "the approval webhook's answer is too large".to_string(),
        })?
        .to_bytes();
    Ok((status, body.to_vec()))
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = WebhookUrl::parse("http://127.0.0.1:8080/approve?x=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/approve?x=1")
        );
        assert_eq!(WebhookUrl::parse("http://example.com").unwrap().path, "/");
        assert_eq!(WebhookUrl::parse("http://[::1]:9/a").unwrap().host, "::1");
        for bad in [
            "https://x/",
            "ftp://x",
            "http://",
            "http://u:p@x/",
            "http://x:notaport/",
        ] {
            assert!(WebhookUrl::parse(bad).is_err(), "{bad}");
        }
    }

    /// A one-shot server on a real socket: reads the request head, answers `raw`, closes.
    async fn answering(raw: Vec<u8>) -> WebhookUrl {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            let _ = s.write_all(&raw).await;
        });
        WebhookUrl::parse(&format!("http://127.0.0.1:{port}/approve")).unwrap()
    }

    async fn post(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
        let url = answering(raw.to_vec()).await;
        post_json(&url, b"{}", Duration::from_secs(10)).await
    }

    #[tokio::test]
    async fn answers() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n{\"approved\":true}";
        assert_eq!(
            post(ok).await.unwrap(),
            (200, b"{\"approved\":true}".to_vec())
        );
        let chunked =
            b"HTTP/1.1 403 No\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(post(chunked).await.unwrap(), (403, b"hello".to_vec()));
        let until_close = b"HTTP/1.1 200 OK\r\n\r\nbody";
        assert_eq!(post(until_close).await.unwrap().1, b"body");
        let cut = b"HTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n{\"appr";
        assert!(post(cut).await.is_err());
        assert_eq!(
            post(b"garbage\r\n\r\n").await.unwrap_err(),
            "the approval webhook did not answer HTTP"
        );
        let mut huge = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
            MAX_ANSWER + 1
        )
        .into_bytes();
        huge.resize(huge.len() + MAX_ANSWER + 1, b'x');
        assert_eq!(
            post(&huge).await.unwrap_err(),
            "the approval webhook's answer is too large"
        );
        assert_eq!(
            post(b"").await.unwrap_err(),
            "the approval webhook closed before answering"
        );
    }
}
