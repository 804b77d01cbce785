//! The server's operator configuration: every `GODOT_MCP_*` setting `serve` takes from
//! its environment (or the matching option), read once by clap into one [`Config`]
//! and passed down in [`AppState`](crate::state::AppState).
//!
//! Names, defaults and accepted spellings are the documented ones (docs/*.md and the
//! safety-model spec). A value that does not parse is an error naming the variable;
//! the server does not start. Test hooks (`GODOT_MCP_TEST_*`, `GODOT_MCP_CRASH_AT`) are
//! not configuration and stay out of it.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser;

/// The default wait for the approval webhook's answer.
pub(crate) const DEFAULT_APPROVAL_TIMEOUT_MS: u64 = 10_000;
/// Turns the editor bridge off (its only value that does).
pub(crate) const ENV_EDITOR_BRIDGE: &str = "GODOT_MCP_EDITOR_BRIDGE";
/// `off`: an editor tool never starts the managed editor by itself.
pub(crate) const ENV_AUTO_EDITOR: &str = "GODOT_MCP_AUTO_EDITOR";
/// The bearer token HTTP clients must send.
pub(crate) const ENV_AUTH_TOKEN: &str = "GODOT_MCP_AUTH_TOKEN";
/// How long a tool waits for the editor's answer.
pub(crate) const ENV_EDITOR_TIMEOUT_MS: &str = "GODOT_MCP_EDITOR_TIMEOUT_MS";
/// The size cap of one image, bytes of PNG.
pub(crate) const ENV_MAX_IMAGE_BYTES: &str = "GODOT_MCP_MAX_IMAGE_BYTES";

/// The default size cap of one image: 4 MiB of PNG.
pub(crate) const DEFAULT_MAX_IMAGE_BYTES: usize = 4 * 1024 * 1024;

/// Environment variable names (spec).
pub(crate) const ENV_WEBHOOK: &str = "GODOT_MCP_APPROVAL_WEBHOOK";
pub(crate) const ENV_FAIL_OPEN: &str = "GODOT_MCP_APPROVAL_FAIL_OPEN";
pub(crate) const ENV_REQUIRE: &str = "GODOT_MCP_APPROVAL_REQUIRE";
/// How long the webhook may take to answer, in milliseconds (default 10000).
pub(crate) const ENV_WEBHOOK_TIMEOUT_MS: &str = "GODOT_MCP_APPROVAL_TIMEOUT_MS";
/// Enabled toolsets (same as `serve --toolsets`).
pub(crate) const ENV_TOOLSETS: &str = "GODOT_MCP_TOOLSETS";
/// The folders outside the project import_asset may read from (`:`-separated).
pub(crate) const ENV_IMPORT_DIRS: &str = "GODOT_MCP_IMPORT_DIRS";
/// The Godot executable tools launch (else `godot`/`godot4` on `PATH`).
pub(crate) const ENV_GODOT_BIN: &str = "GODOT_BIN";

/// Where the Godot binary is looked for: `GODOT_BIN` and `PATH` as the server found them
/// at start, read once. `godot_process::godot` resolves it on each launch (the file must
/// still be an executable then), so every launch uses the same lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GodotLookup {
    /// `GODOT_BIN`, if set.
    pub bin: Option<OsString>,
    /// `PATH`, searched for `godot` and `godot4` when `GODOT_BIN` is unset or empty.
    pub path: Option<OsString>,
}

impl GodotLookup {
    /// The lookup of this process's environment.
    pub fn from_env() -> Self {
        Self {
            bin: std::env::var_os(ENV_GODOT_BIN),
            path: std::env::var_os("PATH"),
        }
    }

    /// Exactly this binary (tests, and a server that was given one).
    pub fn binary(bin: impl Into<OsString>) -> Self {
        Self {
            bin: Some(bin.into()),
            path: None,
        }
    }
}

/// The approval gate's configuration; fixed for the life of the server.
#[derive(Debug, Clone, Default)]
pub struct ApprovalConfig {
    /// Where to POST each gated call for a decision.
    pub webhook: Option<WebhookUrl>,
    /// Allow the call when the webhook cannot be reached or fails (never when it denies).
    pub fail_open: bool,
    pub webhook_timeout: Duration,
    /// Ask the human through the MCP client (elicitation) before each gated call.
    pub require_elicitation: bool,
}

impl ApprovalConfig {
    pub fn is_active(&self) -> bool {
        self.webhook.is_some() || self.require_elicitation
    }
}

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

    pub(crate) fn host_header(&self) -> String {
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

/// What `serve` is configured with, besides the project and its transport.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// A folder outside the project that import_asset may copy assets from (symlinks
    /// resolved). Repeatable; none by default, so a source outside the project is
    /// refused (PATH_REFUSED). GODOT_MCP_IMPORT_DIRS: `:`-separated.
    #[arg(
        long = "import-dir",
        env = ENV_IMPORT_DIRS,
        value_name = "DIR",
        value_delimiter = ':'
    )]
    pub import_dirs: Vec<PathBuf>,

    /// http:// URL asked to approve each mutating/destructive call (the approval gate).
    #[arg(long, env = ENV_WEBHOOK, value_name = "URL", value_parser = Parsed(parse_webhook))]
    pub approval_webhook: Option<Webhook>,

    /// Allow calls when the webhook cannot be reached or fails (default: deny; never
    /// when it answers no). true/false, 1/0, yes/no, on/off.
    #[arg(long, env = ENV_FAIL_OPEN, value_name = "BOOL", default_value = "false",
          value_parser = Parsed(parse_flag), action = clap::ArgAction::Set)]
    pub approval_fail_open: bool,

    /// How long the webhook may take, in milliseconds.
    #[arg(long, env = ENV_WEBHOOK_TIMEOUT_MS, value_name = "MS",
          default_value_t = DEFAULT_APPROVAL_TIMEOUT_MS, value_parser = Parsed(parse_u64))]
    pub approval_timeout_ms: u64,

    /// Ask the human through the MCP client (elicitation) before each gated call.
    /// true/false, 1/0, yes/no, on/off.
    #[arg(long, env = ENV_REQUIRE, value_name = "BOOL", default_value = "false",
          value_parser = Parsed(parse_flag), action = clap::ArgAction::Set)]
    pub approval_require: bool,

    /// `off`: do not start the editor bridge (no discovery file); any other value
    /// leaves it on.
    #[arg(long, env = ENV_EDITOR_BRIDGE, value_name = "on|off", default_value = "on",
          value_parser = Parsed(parse_bridge), action = clap::ArgAction::Set)]
    pub editor_bridge: bool,

    /// `off`: an editing tool that finds no editor connected refuses, instead of
    /// starting this server's managed headless editor (when the project has the add-on,
    /// Godot is found and no other editor runs on the project) and waiting for it.
    #[arg(long, env = ENV_AUTO_EDITOR, value_name = "on|off", default_value = "on",
          value_parser = Parsed(parse_bridge), action = clap::ArgAction::Set)]
    pub auto_editor: bool,

    /// How long a tool waits for the editor's answer, in milliseconds.
    #[arg(long, env = ENV_EDITOR_TIMEOUT_MS, value_name = "MS",
          default_value_t = godot_mcp_protocol::DEFAULT_REQUEST_TIMEOUT_MS,
          value_parser = Parsed(parse_positive_u64))]
    pub editor_timeout_ms: u64,

    /// Largest screenshot a tool returns, in bytes of PNG.
    #[arg(long, env = ENV_MAX_IMAGE_BYTES, value_name = "BYTES",
          default_value_t = DEFAULT_MAX_IMAGE_BYTES,
          value_parser = Parsed(parse_positive))]
    pub max_image_bytes: usize,

    /// Bearer token HTTP clients must send (Authorization: Bearer ...); required to
    /// listen on a non-loopback address, enforced whenever set. Prefer the variable: an
    /// option is visible to other local users.
    #[arg(long, env = ENV_AUTH_TOKEN, value_name = "TOKEN", hide_env_values = true,
          value_parser = Parsed(parse_token))]
    pub auth_token: Option<Token>,

    /// Where tools that launch Godot find it: `GODOT_BIN` and `PATH`, read once when the
    /// configuration is built (not an option: the variable is the documented way).
    #[arg(skip = GodotLookup::from_env())]
    pub godot: GodotLookup,
}

impl Default for Config {
    /// The documented defaults (nothing set); Godot is looked for where this process's
    /// environment says.
    fn default() -> Self {
        Self {
            import_dirs: Vec::new(),
            approval_webhook: None,
            approval_fail_open: false,
            approval_timeout_ms: DEFAULT_APPROVAL_TIMEOUT_MS,
            approval_require: false,
            editor_bridge: true,
            auto_editor: true,
            editor_timeout_ms: godot_mcp_protocol::DEFAULT_REQUEST_TIMEOUT_MS,
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
            auth_token: None,
            godot: GodotLookup::from_env(),
        }
    }
}

impl Config {
    /// The approval gate's configuration.
    pub fn approval(&self) -> ApprovalConfig {
        ApprovalConfig {
            webhook: self.approval_webhook.clone().and_then(|w| w.0),
            fail_open: self.approval_fail_open,
            webhook_timeout: Duration::from_millis(self.approval_timeout_ms),
            require_elicitation: self.approval_require,
        }
    }

    /// The HTTP bearer token; blank counts as unset.
    pub fn token(&self) -> Option<String> {
        self.auth_token.as_ref().and_then(|t| t.0.clone())
    }
}

/// A webhook URL as given; blank (or whitespace) is `None`, i.e. unset.
#[derive(Debug, Clone)]
pub struct Webhook(Option<WebhookUrl>);

/// A token value as given; blank (or whitespace) is `None`, i.e. unset.
#[derive(Clone)]
pub struct Token(Option<String>);

impl std::fmt::Debug for Token {
    // Never printed: a token is a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Token(set)"
        } else {
            "Token(blank)"
        })
    }
}

fn parse_flag(v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        _ => Err(format!("{v:?} is not a boolean (use true or false)")),
    }
}

fn parse_u64(v: &str) -> Result<u64, String> {
    v.trim()
        .parse()
        .map_err(|_| format!("{v:?} is not a number of milliseconds"))
}

fn parse_positive_u64(v: &str) -> Result<u64, String> {
    match v.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{v:?} is not a positive number of milliseconds")),
    }
}

fn parse_positive(v: &str) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{v:?} is not a positive number of bytes")),
    }
}

fn parse_bridge(v: &str) -> Result<bool, String> {
    Ok(v.trim() != "off")
}

fn parse_webhook(v: &str) -> Result<Webhook, String> {
    match v.trim() {
        "" => Ok(Webhook(None)),
        url => WebhookUrl::parse(url).map(|u| Webhook(Some(u))),
    }
}

fn parse_token(v: &str) -> Result<Token, String> {
    Ok(Token((!v.trim().is_empty()).then(|| v.to_string())))
}

/// A value parser from a plain function whose error names the environment variable
/// the value belongs to (clap's own message names only the option).
#[derive(Clone, Copy)]
struct Parsed<T>(fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Parsed<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_str().ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                "a value is not UTF-8\n",
            )
            .with_cmd(cmd)
        })?;
        (self.0)(text).map_err(|why| {
            let name = arg.and_then(clap::Arg::get_env).map_or_else(
                || arg.map_or_else(String::new, |a| a.get_id().to_string()),
                |e| e.to_string_lossy().into_owned(),
            );
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{name}: {why}\n"),
            )
            .with_cmd(cmd)
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        config: Config,
    }

    /// Parse `args` as options (the same value parsers the variables go through).
    /// Only runs where the test's environment sets none of the variables.
    fn parse(args: &[&str]) -> Result<Config, String> {
        let argv = std::iter::once("probe").chain(args.iter().copied());
        Probe::try_parse_from(argv)
            .map(|p| p.config)
            .map_err(|e| e.to_string())
    }

    fn env_is_clean() -> bool {
        [
            ENV_WEBHOOK,
            ENV_FAIL_OPEN,
            ENV_WEBHOOK_TIMEOUT_MS,
            ENV_REQUIRE,
            ENV_EDITOR_BRIDGE,
            ENV_AUTO_EDITOR,
            ENV_EDITOR_TIMEOUT_MS,
            ENV_MAX_IMAGE_BYTES,
            ENV_AUTH_TOKEN,
        ]
        .iter()
        .all(|k| std::env::var_os(k).is_none())
    }

    #[test]
    fn nothing_set_is_the_documented_defaults() {
        if !env_is_clean() {
            return;
        }
        let c = parse(&[]).unwrap();
        assert!(c.approval().webhook.is_none());
        assert!(!c.approval_fail_open && !c.approval_require);
        assert_eq!(c.approval().webhook_timeout, Duration::from_secs(10));
        assert!(c.editor_bridge);
        assert_eq!(c.editor_timeout_ms, 10_000);
        assert_eq!(c.max_image_bytes, 4 * 1024 * 1024);
        assert_eq!(c.token(), None);
    }

    /// Every spelling the old hand parser took: case-insensitive, trimmed, blank false.
    #[test]
    fn booleans_take_every_documented_spelling() {
        for (v, want) in [
            ("true", true),
            ("TRUE", true),
            (" yes ", true),
            ("1", true),
            ("On", true),
            ("false", false),
            ("0", false),
            ("no", false),
            ("OFF", false),
            ("", false),
            (" ", false),
        ] {
            let c = parse(&["--approval-fail-open", v, "--approval-require", v]).unwrap();
            assert_eq!(
                (c.approval_fail_open, c.approval_require),
                (want, want),
                "{v:?}"
            );
        }
    }

    /// A bad value is an error naming the variable, not a silent default.
    #[test]
    fn a_bad_value_is_an_error_naming_the_variable() {
        for (opt, v, var) in [
            ("--approval-fail-open", "maybe", ENV_FAIL_OPEN),
            ("--approval-require", "2", ENV_REQUIRE),
            ("--approval-timeout-ms", "ten", ENV_WEBHOOK_TIMEOUT_MS),
            ("--approval-webhook", "https://x/", ENV_WEBHOOK),
            ("--max-image-bytes", "0", ENV_MAX_IMAGE_BYTES),
            ("--max-image-bytes", "4MB", ENV_MAX_IMAGE_BYTES),
        ] {
            let e = parse(&[opt, v]).unwrap_err();
            assert!(e.contains(var), "{opt} {v}: {e}");
        }
    }

    #[test]
    fn numbers_are_trimmed() {
        let c = parse(&[
            "--approval-timeout-ms",
            " 250 ",
            "--max-image-bytes",
            "4000",
            "--editor-timeout-ms",
            " 300",
        ])
        .unwrap();
        assert_eq!(c.approval().webhook_timeout, Duration::from_millis(250));
        assert_eq!(c.max_image_bytes, 4000);
        assert_eq!(c.editor_timeout_ms, 300);
        // No wait at all would refuse every editor call: a clear error instead.
        assert!(parse(&["--editor-timeout-ms", "0"]).is_err());
    }

    #[test]
    fn a_blank_webhook_is_unset() {
        assert!(
            parse(&["--approval-webhook", " "])
                .unwrap()
                .approval()
                .webhook
                .is_none()
        );
    }

    #[test]
    fn the_webhook_url_is_parsed_at_start() {
        let c = parse(&["--approval-webhook", " http://127.0.0.1:9/approve "]).unwrap();
        let url = c.approval().webhook.unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.path.as_str()),
            ("127.0.0.1", 9, "/approve")
        );
    }

    /// Only `off` (trimmed) turns the bridge off; the old check took anything else as on.
    #[test]
    fn only_off_turns_the_editor_bridge_off() {
        for (v, on) in [
            ("off", false),
            (" off ", false),
            ("on", true),
            ("OFF", true),
            ("no", true),
        ] {
            assert_eq!(
                parse(&["--editor-bridge", v]).unwrap().editor_bridge,
                on,
                "{v:?}"
            );
        }
    }

    /// A blank token is no token (an empty variable must not demand an empty bearer).
    #[test]
    fn a_blank_token_is_unset() {
        assert_eq!(parse(&["--auth-token", "  "]).unwrap().token(), None);
        assert_eq!(
            parse(&["--auth-token", "s3cret"])
                .unwrap()
                .token()
                .as_deref(),
            Some("s3cret")
        );
    }
}
