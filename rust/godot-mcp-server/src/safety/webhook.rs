//! The approval webhook's transport: one HTTP/1.1 POST over a tokio `TcpStream`,
//! with a deadline over the whole exchange.
//!
//! Why hand-written: the gate needs exactly one request shape to a URL the operator
//! configured, and nothing else. A full client (reqwest: hyper-util, tower, a TLS
//! stack; ureq: rustls, a blocking thread) would add a large dependency surface to
//! the one component whose job is to be auditable. The cost is that only `http://`
//! URLs are supported; the server refuses to start with an `https://` webhook rather
//! than send approvals somewhere it cannot reach (put a local relay in front of an
//! HTTPS endpoint). Answers are bounded (64 KiB) and parsed strictly enough to read
//! a status and a JSON body (Content-Length, chunked, or until close).
//!
//! Deciding what an answer means is not done here: see `safety::webhook_verdict`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest webhook answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// A parsed `http://host[:port][/path]` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl WebhookUrl {
    pub fn parse(url: &str) -> Result<Self, String> {
        if url.starts_with("https://") {
            return Err(format!(
                "{url:?}: https webhooks are not supported by this build (no TLS stack); \
                 use an http:// URL, e.g. a local relay"
            ));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url:?} is not an http:// URL"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{url:?} has no usable host"));
        }
        let (host, port) = if let Some(h) = authority.strip_prefix('[') {
            let (h, p) = h
                .split_once(']')
                .ok_or_else(|| format!("{url:?}: bad IPv6 host"))?;
            (h.to_string(), p.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        let port = match port {
            Some(p) => p.parse().map_err(|_| format!("{url:?}: bad port"))?,
            None => 80,
        };
        if path.chars().any(|c| c.is_control() || c == ' ') {
            return Err(format!(
                "{url:?}: the path has spaces or control characters"
            ));
        }
        Ok(Self {
            host,
            port,
            path: path.to_string(),
        })
    }

    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 80 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// POST `body` as JSON; the status and body of the answer, or why there is none.
pub async fn post_json(
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
    let mut stream = TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("the approval webhook is unreachable ({})", e.kind()))?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
         User-Agent: godot-mcp/{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        url.path,
        url.host_header(),
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    let io = |e: std::io::Error| format!("the approval webhook connection failed ({})", e.kind());
    stream.write_all(head.as_bytes()).await.map_err(io)?;
    stream.write_all(body).await.map_err(io)?;
    stream.flush().await.map_err(io)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.map_err(io)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > MAX_ANSWER {
            return Err("the approval webhook's answer is too large".into());
        }
        if let Some(done) = parse_answer(&raw, false) {
            return done;
        }
    }
    parse_answer(&raw, true)
        .unwrap_or_else(|| Err("the approval webhook closed before answering".into()))
}

/// Parse an HTTP/1.1 answer; `None` while more bytes are needed.
fn parse_answer(raw: &[u8], eof: bool) -> Option<Result<(u16, Vec<u8>), String>> {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = match std::str::from_utf8(&raw[..head_end]) {
        Ok(h) => h,
        Err(_) => return Some(Err("the approval webhook did not answer HTTP".into())),
    };
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split(' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Some(Err("the approval webhook did not answer HTTP".into()));
    };
    let Ok(status) = code.parse::<u16>() else {
        return Some(Err("the approval webhook did not answer HTTP".into()));
    };
    if !version.starts_with("HTTP/1.") {
        return Some(Err("the approval webhook did not answer HTTP/1.x".into()));
    }
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "content-length" {
                length = v.parse::<usize>().ok();
            } else if k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            }
        }
    }
    let body = &raw[head_end + 4..];
    if chunked {
        return decode_chunked(body).map(|b| Ok((status, b))).or_else(|| {
            eof.then(|| Err("the approval webhook's chunked answer was cut short".into()))
        });
    }
    match length {
        Some(len) if body.len() >= len => Some(Ok((status, body[..len].to_vec()))),
        Some(_) if eof => Some(Err("the approval webhook's answer was cut short".into())),
        Some(_) => None,
        None if eof => Some(Ok((status, body.to_vec()))),
        None => None,
    }
}

/// A complete chunked body, or `None` when incomplete or malformed.
fn decode_chunked(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if body.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
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

    #[test]
    fn answers() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n{\"approved\":true}";
        assert_eq!(
            parse_answer(ok, false).unwrap().unwrap(),
            (200, b"{\"approved\":true}".to_vec())
        );
        let partial = b"HTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n{\"appr";
        assert!(parse_answer(partial, false).is_none());
        assert!(parse_answer(partial, true).unwrap().is_err());
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked, false).unwrap().unwrap().1, b"hello");
        assert!(parse_answer(b"garbage\r\n\r\n", true).unwrap().is_err());
    }
}
