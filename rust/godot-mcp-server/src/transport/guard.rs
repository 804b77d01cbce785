//! The HTTP listener's front door: who may connect at all.
//!
//! Every request passes [`GuardPolicy::check`] before routing and before a byte of
//! its body is read, in this order:
//!
//! 1. **Host** (DNS rebinding): exactly one `Host` header, a plain `host[:port]`
//!    authority, equal (ASCII case-insensitively) to one of the allowed authorities —
//!    by default the loopback names at the bound port. Missing, duplicated, malformed,
//!    foreign, suffixed (`localhost.evil.example`) and trailing-dot hosts are refused.
//! 2. **Origin** (a browser page): absent is fine (CLI agents send none); otherwise
//!    exactly one, a `scheme://host[:port]` that is one of the allowed origins — by
//!    default the server's own loopback origins. `null`, malformed, foreign and
//!    duplicated origins are refused.
//! 3. **Token**: when `GODOT_MCP_AUTH_TOKEN` is set, exactly one
//!    `Authorization: Bearer <token>` header equal to it (compared in constant time).
//!
//! Host/Origin failures are 403, token failures 401 with `WWW-Authenticate: Bearer`.
//! rmcp's own allowed-hosts/allowed-origins check is configured with the same lists
//! as a second line ([`GuardPolicy::rmcp_allowed_hosts`]); this guard does not rely on it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use subtle::ConstantTimeEq;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::Admission;
use crate::counters::Counters;

/// The env var holding the bearer token; required for a non-loopback bind.
pub(crate) use crate::config::ENV_AUTH_TOKEN as AUTH_TOKEN_ENV;

/// Shortest token accepted: a guessable token on a network listener is no gate.
pub(crate) const MIN_TOKEN_LEN: usize = 16;

/// A `host:port` the guard accepts in `Host` (host lowercase, IPv6 without brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority {
    pub host: String,
    pub port: u16,
}

impl Authority {
    fn new(host: &str, port: u16) -> Self {
        Self {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port,
        }
    }

    /// `host:port` with IPv6 hosts bracketed, as it appears in a `Host` header.
    pub(crate) fn to_host_header(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// An origin tuple the guard accepts (scheme and host lowercase, port explicit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl Origin {
    pub(crate) fn serialize(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}://{}:{}", self.scheme, host, self.port)
    }
}

/// The bearer token, kept only as its SHA-256 so comparisons take the same time
/// whatever the presented token's length or prefix.
#[derive(Clone)]
pub(crate) struct BearerToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl BearerToken {
    pub(crate) fn new(token: &str) -> Result<Self, GuardConfigError> {
        let token = token.trim();
        if token.len() < MIN_TOKEN_LEN {
            return Err(GuardConfigError::TokenTooShort);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(GuardConfigError::TokenNotPrintable);
        }
        Ok(Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    fn matches(&self, presented: &[u8]) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented).into();
        bool::from(presented.ct_eq(&self.digest))
    }
}

/// A configuration the guard refuses to run with; the server does not start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum GuardConfigError {
    #[error(
        "refusing to listen on {addr}: it is not a loopback address, and a non-loopback \
         listener requires {AUTH_TOKEN_ENV} (a random secret of at least {MIN_TOKEN_LEN} \
         characters that clients send as `Authorization: Bearer <token>`)"
    )]
    NonLoopbackWithoutToken { addr: SocketAddr },
    #[error("{AUTH_TOKEN_ENV} is shorter than {MIN_TOKEN_LEN} characters")]
    TokenTooShort,
    #[error("{AUTH_TOKEN_ENV} must be printable ASCII without spaces")]
    TokenNotPrintable,
    #[error("allowed host `{0}` is not a host name, IP address or host:port")]
    BadAllowedHost(String),
    #[error("allowed origin `{0}` is not an origin like http://host:port")]
    BadAllowedOrigin(String),
}

/// Why a request was refused. The message is what the client reads in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Refusal {
    HostMissing,
    HostDuplicated,
    HostMalformed,
    HostNotAllowed,
    OriginDuplicated,
    OriginMalformed,
    OriginNotAllowed,
    TokenMissing,
    TokenWrong,
}

impl Refusal {
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Refusal::TokenMissing | Refusal::TokenWrong => StatusCode::UNAUTHORIZED,
            _ => StatusCode::FORBIDDEN,
        }
    }

    pub(crate) fn message(self) -> &'static str {
        match self {
            Refusal::HostMissing => "Forbidden: the request has no Host header",
            Refusal::HostDuplicated => "Forbidden: the request has more than one Host header",
            Refusal::HostMalformed => "Forbidden: the Host header is not a host[:port]",
            Refusal::HostNotAllowed => {
                "Forbidden: Host is not one this server answers to (DNS rebinding guard); \
                 connect to the address it printed, or add --allowed-host"
            }
            Refusal::OriginDuplicated => "Forbidden: the request has more than one Origin header",
            Refusal::OriginMalformed => {
                "Forbidden: the Origin header is not a scheme://host[:port]"
            }
            Refusal::OriginNotAllowed => {
                "Forbidden: requests from a browser page of another origin are refused; \
                 add --allowed-origin to allow one"
            }
            Refusal::TokenMissing => {
                "Unauthorized: send Authorization: Bearer <GODOT_MCP_AUTH_TOKEN>"
            }
            Refusal::TokenWrong => "Unauthorized: the bearer token is wrong",
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = (self.status(), self.message()).into_response();
        if self.status() == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"godot-mcp\""),
            );
        }
        response
    }
}

/// What the guard accepts. Built once at startup, from the bound address.
#[derive(Debug, Clone)]
pub(crate) struct GuardPolicy {
    allowed_hosts: Vec<Authority>,
    allowed_origins: Vec<Origin>,
    token: Option<BearerToken>,
}

impl GuardPolicy {
    /// The policy for a listener bound at `bound` (the real port, after binding).
    ///
    /// Always allowed: `127.0.0.1`, `localhost` and `[::1]` at the bound port, and the
    /// bound IP itself when it is a specific address. `extra_hosts` are `host` (at the
    /// bound port) or `host:port`; `extra_origins` are `scheme://host[:port]`.
    pub(crate) fn new(
        bound: SocketAddr,
        extra_hosts: &[String],
        extra_origins: &[String],
        token: Option<BearerToken>,
    ) -> Result<Self, GuardConfigError> {
        if !bound.ip().is_loopback() && token.is_none() {
            return Err(GuardConfigError::NonLoopbackWithoutToken { addr: bound });
        }
        let port = bound.port();
        let mut allowed_hosts: Vec<Authority> = ["127.0.0.1", "localhost", "::1"]
            .iter()
            .map(|h| Authority::new(h, port))
            .collect();
        let mut add_host = |authority: Authority| {
            if !allowed_hosts.contains(&authority) {
                allowed_hosts.push(authority);
            }
        };
        if !bound.ip().is_unspecified() {
            add_host(Authority::new(&bound.ip().to_string(), port));
        }
        for extra in extra_hosts {
            let extra = extra.trim();
            let authority = parse_authority(extra, port)
                .ok_or_else(|| GuardConfigError::BadAllowedHost(extra.to_owned()))?;
            add_host(authority);
        }
        let mut allowed_origins: Vec<Origin> = allowed_hosts
            .iter()
            .map(|a| Origin {
                scheme: "http".into(),
                host: a.host.clone(),
                port: a.port,
            })
            .collect();
        for extra in extra_origins {
            let extra = extra.trim();
            let origin = parse_origin(extra)
                .ok_or_else(|| GuardConfigError::BadAllowedOrigin(extra.to_owned()))?;
            if !allowed_origins.contains(&origin) {
                allowed_origins.push(origin);
            }
        }
        Ok(Self {
            allowed_hosts,
            allowed_origins,
            token,
        })
    }

    /// The same host list, in the form rmcp's `allowed_hosts` takes.
    pub(crate) fn rmcp_allowed_hosts(&self) -> Vec<String> {
        self.allowed_hosts
            .iter()
            .map(Authority::to_host_header)
            .collect()
    }

    /// The same origin list, in the form rmcp's `allowed_origins` takes.
    pub(crate) fn rmcp_allowed_origins(&self) -> Vec<String> {
        self.allowed_origins.iter().map(Origin::serialize).collect()
    }

    pub(crate) fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// Decide on a request from its target and headers alone.
    ///
    /// An absolute-form target (`POST http://host/mcp`) names the host too (RFC 9112
    /// §3.2.2 lets it override `Host`), so its authority must be allowed as well.
    pub(crate) fn check_request(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<Admission, Refusal> {
        if let Some(authority) = uri.authority() {
            let default_port = if uri.scheme_str() == Some("https") {
                443
            } else {
                80
            };
            let target =
                parse_authority(authority.as_str(), default_port).ok_or(Refusal::HostMalformed)?;
            if !self.allowed_hosts.contains(&target) {
                return Err(Refusal::HostNotAllowed);
            }
        }
        self.check(headers)
    }

    /// Decide on a request from its headers alone.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<Admission, Refusal> {
        let host = single(headers, header::HOST)
            .map_err(|()| Refusal::HostDuplicated)?
            .ok_or(Refusal::HostMissing)?;
        let host = host
            .to_str()
            .ok()
            .and_then(|h| parse_authority(h, 80))
            .ok_or(Refusal::HostMalformed)?;
        if !self.allowed_hosts.contains(&host) {
            return Err(Refusal::HostNotAllowed);
        }

        if let Some(origin) =
            single(headers, header::ORIGIN).map_err(|()| Refusal::OriginDuplicated)?
        {
            let origin = origin.to_str().map_err(|_| Refusal::OriginMalformed)?;
            if origin.trim().eq_ignore_ascii_case("null") {
                return Err(Refusal::OriginNotAllowed);
            }
            let origin = parse_origin(origin).ok_or(Refusal::OriginMalformed)?;
            if !self.allowed_origins.contains(&origin) {
                return Err(Refusal::OriginNotAllowed);
            }
        }

        let Some(token) = &self.token else {
            return Ok(Admission::Loopback);
        };
        let auth = single(headers, header::AUTHORIZATION)
            .map_err(|()| Refusal::TokenWrong)?
            .ok_or(Refusal::TokenMissing)?;
        let presented = auth
            .as_bytes()
            .strip_prefix(b"Bearer ")
            .or_else(|| auth.as_bytes().strip_prefix(b"bearer "))
            .ok_or(Refusal::TokenMissing)?;
        if token.matches(presented) {
            Ok(Admission::BearerToken)
        } else {
            Err(Refusal::TokenWrong)
        }
    }
}

/// The one value of a header: `Ok(None)` when absent, `Err` when repeated.
fn single(headers: &HeaderMap, name: header::HeaderName) -> Result<Option<&HeaderValue>, ()> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(());
    }
    Ok(first)
}

/// `host[:port]` with no userinfo, path or stray characters; `default_port` if none.
fn parse_authority(text: &str, default_port: u16) -> Option<Authority> {
    if text.is_empty() || text.contains(['@', '/', '?', '#', ' ', ',']) {
        return None;
    }
    let authority: axum::http::uri::Authority = text.parse().ok()?;
    let host = authority.host();
    if host.is_empty() || host.ends_with('.') {
        // A trailing dot names the same DNS host but a different origin, and no
        // client of this server needs it; refusing it keeps the match exact.
        return None;
    }
    if host.starts_with('[') {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok()?;
    }
    let port = match authority.port() {
        Some(p) => p.as_u16(),
        None if text.ends_with(':') => return None,
        None => default_port,
    };
    Some(Authority::new(host, port))
}

/// `scheme://host[:port]` (an optional trailing `/` tolerated), http or https only.
fn parse_origin(text: &str) -> Option<Origin> {
    let text = text.trim();
    let (scheme, rest) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let authority = parse_authority(rest, default_port)?;
    Some(Origin {
        scheme,
        host: authority.host,
        port: authority.port,
    })
}

/// What the guard middleware needs.
#[derive(Debug)]
pub(crate) struct GuardState {
    pub policy: GuardPolicy,
    pub counters: Arc<Counters>,
}

/// axum middleware: refuse or admit on headers alone; the body is never polled for a
/// refused request. An admitted request carries its [`Admission`] in its extensions.
pub(crate) async fn guard(
    State(state): State<Arc<GuardState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match state.policy.check_request(request.uri(), request.headers()) {
        Ok(admission) => {
            request.extensions_mut().insert(admission);
            next.run(request).await
        }
        Err(refusal) => {
            Counters::bump(&state.counters.refused);
            tracing::warn!(
                method = %request.method(),
                path = request.uri().path(),
                reason = ?refusal,
                "refused HTTP request"
            );
            refusal.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 4242;

    fn loopback() -> GuardPolicy {
        GuardPolicy::new(SocketAddr::from(([127, 0, 0, 1], PORT)), &[], &[], None).unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn hosts_table() {
        let p = loopback();
        let ok = Ok(Admission::Loopback);
        for (host, want) in [
            ("127.0.0.1:4242", ok),
            ("localhost:4242", ok),
            ("LOCALHOST:4242", ok),
            ("[::1]:4242", ok),
            ("127.0.0.1", Err(Refusal::HostNotAllowed)),
            ("127.0.0.1:4243", Err(Refusal::HostNotAllowed)),
            ("evil.example", Err(Refusal::HostNotAllowed)),
            ("evil.example:4242", Err(Refusal::HostNotAllowed)),
            ("localhost.evil.example:4242", Err(Refusal::HostNotAllowed)),
            ("localhost.:4242", Err(Refusal::HostMalformed)),
            ("user@localhost:4242", Err(Refusal::HostMalformed)),
            ("localhost:4242/x", Err(Refusal::HostMalformed)),
            ("localhost:", Err(Refusal::HostMalformed)),
            ("", Err(Refusal::HostMalformed)),
            ("[::1", Err(Refusal::HostMalformed)),
        ] {
            assert_eq!(p.check(&headers(&[("host", host)])), want, "Host: {host:?}");
        }
        assert_eq!(p.check(&headers(&[])), Err(Refusal::HostMissing));
        assert_eq!(
            p.check(&headers(&[
                ("host", "localhost:4242"),
                ("host", "localhost:4242")
            ])),
            Err(Refusal::HostDuplicated)
        );
    }

    #[test]
    fn origins_table() {
        let p = loopback();
        let ok = Ok(Admission::Loopback);
        for (origin, want) in [
            ("http://localhost:4242", ok),
            ("http://127.0.0.1:4242", ok),
            ("http://[::1]:4242", ok),
            ("http://localhost:4242/", ok),
            ("https://localhost:4242", Err(Refusal::OriginNotAllowed)),
            ("http://localhost:4243", Err(Refusal::OriginNotAllowed)),
            ("http://localhost", Err(Refusal::OriginNotAllowed)),
            ("https://evil.example", Err(Refusal::OriginNotAllowed)),
            ("null", Err(Refusal::OriginNotAllowed)),
            ("NULL", Err(Refusal::OriginNotAllowed)),
            ("localhost:4242", Err(Refusal::OriginMalformed)),
            ("http://", Err(Refusal::OriginMalformed)),
            ("http://localhost:4242/path", Err(Refusal::OriginMalformed)),
            ("file://", Err(Refusal::OriginMalformed)),
            ("chrome-extension://abc", Err(Refusal::OriginMalformed)),
            ("%%%", Err(Refusal::OriginMalformed)),
        ] {
            let h = headers(&[("host", "localhost:4242"), ("origin", origin)]);
            assert_eq!(p.check(&h), want, "Origin: {origin:?}");
        }
        let h = headers(&[
            ("host", "localhost:4242"),
            ("origin", "http://localhost:4242"),
            ("origin", "http://localhost:4242"),
        ]);
        assert_eq!(p.check(&h), Err(Refusal::OriginDuplicated));
    }

    #[test]
    fn non_loopback_needs_a_token() {
        let any = SocketAddr::from(([0, 0, 0, 0], PORT));
        assert_eq!(
            GuardPolicy::new(any, &[], &[], None).unwrap_err(),
            GuardConfigError::NonLoopbackWithoutToken { addr: any }
        );
        assert_eq!(
            BearerToken::new("short").unwrap_err(),
            GuardConfigError::TokenTooShort
        );
        let token = BearerToken::new("0123456789abcdef0123").unwrap();
        let p = GuardPolicy::new(any, &["mybox.lan".into()], &[], Some(token)).unwrap();
        let host = ("host", "127.0.0.1:4242");
        assert_eq!(p.check(&headers(&[host])), Err(Refusal::TokenMissing));
        assert_eq!(
            p.check(&headers(&[
                host,
                ("authorization", "Bearer nope-nope-nope-nope")
            ])),
            Err(Refusal::TokenWrong)
        );
        assert_eq!(
            p.check(&headers(&[
                host,
                ("authorization", "Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM=")
            ])),
            Err(Refusal::TokenMissing)
        );
        assert_eq!(
            p.check(&headers(&[
                host,
                ("authorization", "Bearer 0123456789abcdef0123")
            ])),
            Ok(Admission::BearerToken)
        );
        // Host is checked before the token: a rebinding page learns nothing about it.
        assert_eq!(
            p.check(&headers(&[
                ("host", "evil.example:4242"),
                ("authorization", "Bearer 0123456789abcdef0123")
            ])),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            p.check(&headers(&[
                ("host", "mybox.lan:4242"),
                ("authorization", "Bearer 0123456789abcdef0123")
            ])),
            Ok(Admission::BearerToken)
        );
    }

    #[test]
    fn absolute_form_target_must_name_an_allowed_host_too() {
        let p = loopback();
        let h = headers(&[("host", "localhost:4242")]);
        let target = |t: &str| t.parse::<Uri>().unwrap();
        assert_eq!(
            p.check_request(&target("/mcp"), &h),
            Ok(Admission::Loopback)
        );
        assert_eq!(
            p.check_request(&target("http://localhost:4242/mcp"), &h),
            Ok(Admission::Loopback)
        );
        assert_eq!(
            p.check_request(&target("http://evil.example/mcp"), &h),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            p.check_request(&target("http://localhost/mcp"), &h),
            Err(Refusal::HostNotAllowed)
        );
    }

    #[test]
    fn rmcp_lists_mirror_ours() {
        let p = loopback();
        assert_eq!(
            p.rmcp_allowed_hosts(),
            ["127.0.0.1:4242", "localhost:4242", "[::1]:4242"]
        );
        assert_eq!(
            p.rmcp_allowed_origins(),
            [
                "http://127.0.0.1:4242",
                "http://localhost:4242",
                "http://[::1]:4242"
            ]
        );
    }
}
