//! The editor's file system: rescan (and wait for the import), the import status of
//! assets read from disk, and importing an external asset through the journal.

use crate::config::ENV_IMPORT_DIRS;
use crate::error::{ErrorCode, ToolError};
use crate::honesty::Persistence;
use crate::planes::editor::RequestFailure;
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Precondition, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::{Walk, project_too_large, walk_project};
use crate::tools::{Call, Out, Plan, ToolDef, ToolMeta};
use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta::runtime(
                Toolset::Filesystem,
                "rescan_filesystem",
                "Rescan the editor's file system",
                "Make the connected editor rescan the project and import what \
                    changed; waits until it finished (TIMEOUT if not within timeout_ms).",
                None,
            ),
            rescan_filesystem,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Filesystem,
                "get_import_status",
                "Import status of assets",
                "Importable files whose import is missing, failed or stale (from the \
                 .import files and .godot/imported on disk).",
            ),
            get_import_status,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "import_asset",
                title: "Import an external asset",
                description: "Copy an image, model or sound into the project (journaled) and \
                    wait for the editor's import. Sources outside the project: only from \
                    operator-allowed folders (--import-dir).",
                class: class::Destructive,
                toolset: Toolset::Filesystem,
                effect: Some(EffectKind::File),
            },
            plan_import_asset,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RescanArgs {
    /// Wait at most this long, 1000-600000 ms (default 60000).
    #[serde(default)]
    #[schemars(range(min = 1000, max = 600000))]
    timeout_ms: Option<u64>,
}

/// Sends a bridge command that acts (a scan): like `editor::ask`, but a lost answer
/// may have started it.
fn editor_act<P: BridgeCommand>(state: &AppState, p: &P) -> Result<Value, ToolError> {
    let (command, bridge) = (P::METHOD, crate::tools::kit::editor::connected(state)?);
    match bridge.request(
        command,
        p.params(),
        crate::tools::kit::editor::editor_timeout(state),
    ) {
        Ok(v) => Ok(v),
        Err(RequestFailure::Editor(e)) => Err(ToolError::new(ErrorCode::EditorError, e.message)),
        Err(RequestFailure::NotSent(_)) => Err(Precondition::BridgeConnected.error()),
        Err(RequestFailure::NoAnswer { timed_out, reason }) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the editor did not answer {command}: {reason}"),
        )
        .details(json!({"may_have_applied": true, "timed_out": timed_out}))),
    }
}

/// How often the editor is asked whether its scan is done.
const SCAN_POLL: Duration = Duration::from_millis(50);

/// A finished file-system scan.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Scanned {
    pub finished: bool,
    /// Whether this request started the scan (false: one was already running).
    pub started: Option<bool>,
    pub waited_ms: u64,
}

/// Starts a scan in the connected editor and waits until it is applied (see
/// `filesystem.status`) or `limit` passed. Blocking: call from a blocking task.
fn scan_and_wait(state: &AppState, limit: Duration) -> Result<Scanned, ToolError> {
    let start = Instant::now();
    let v = editor_act(state, &cmd::FilesystemScan {})?;
    let before = v["scans_finished"].as_u64().unwrap_or(0);
    loop {
        let s = crate::tools::kit::editor::ask(state, &cmd::FilesystemStatus {}, None)?;
        let waited = start.elapsed().as_millis() as u64;
        if s["scanning"] == json!(false) && s["scans_finished"].as_u64().unwrap_or(0) > before {
            return Ok(Scanned {
                finished: true,
                started: v["started"].as_bool(),
                waited_ms: waited,
            });
        }
        if start.elapsed() >= limit {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "the editor's file-system scan did not finish within {} ms; it goes on in \
                     the editor",
                    limit.as_millis()
                ),
            )
            .hint("Call rescan_filesystem again later, or read get_import_status.")
            .details(json!({"finished": false, "waited_ms": waited,
                "scanning": s["scanning"], "progress": s["progress"]})));
        }
        std::thread::sleep(SCAN_POLL);
    }
}

async fn rescan_filesystem(Call { state, args, .. }: Call<RescanArgs>) -> Out<Scanned> {
    let timeout = args.timeout_ms.unwrap_or(60_000);
    if !(1000..=600_000).contains(&timeout) {
        return Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1000–600000",
        ));
    }
    tokio::task::spawn_blocking(move || scan_and_wait(&state, Duration::from_millis(timeout)))
        .await
        .map_err(|e| ToolError::internal(format!("scan task failed: {e}")))?
}

/// File extensions Godot imports that import_asset accepts: images, models, sounds.
const ASSET_EXTENSIONS: [&str; 18] = [
    "png", "jpg", "jpeg", "webp", "svg", "tga", "bmp", "hdr", "exr", "ktx", "dds", "wav", "ogg",
    "mp3", "glb", "gltf", "obj", "fbx",
];
/// Also importable, and so reported by get_import_status (not copied by import_asset).
const OTHER_IMPORTED: [&str; 6] = ["ttf", "otf", "woff", "woff2", "fnt", "csv"];

fn is_importable(ext: &str) -> bool {
    ASSET_EXTENSIONS.contains(&ext) || OTHER_IMPORTED.contains(&ext) || ext == "dae"
}

/// One file's import state, read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImportState {
    /// Imported, and the source is what was imported.
    Current,
    /// The importer keeps or skips it on purpose.
    NotImported(&'static str),
    /// No `.import` file: never imported.
    Missing,
    /// `valid=false`: the import failed.
    Failed,
    /// An imported file (`dest_files`) is gone.
    OutputMissing(String),
    /// The source changed since its import (its MD5 differs from the recorded one).
    Stale,
}

impl ImportState {
    fn as_str(&self) -> &'static str {
        match self {
            Self::Current => "imported",
            Self::NotImported(why) => why,
            Self::Missing => "missing",
            Self::Failed => "failed",
            Self::OutputMissing(_) => "output_missing",
            Self::Stale => "stale",
        }
    }

    fn is_problem(&self) -> bool {
        !matches!(self, Self::Current | Self::NotImported(_))
    }
}

/// The value of `key="…"` (or `key=…`) on one line of a Godot config file.
fn config_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix('=')?;
        Some(rest.trim().trim_matches('"'))
    })
}

/// The `.godot/imported/<file>-<md5 of its path>` prefix of an imported file's path.
fn import_base(dest: &str) -> Option<&str> {
    let bytes = dest.as_bytes();
    (0..bytes.len()).rev().find_map(|i| {
        let hex = dest.get(i + 1..i + 33)?;
        (bytes[i] == b'-'
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && matches!(bytes.get(i + 33), None | Some(b'.')))
        .then(|| &dest[..i + 33])
    })
}

/// The import state of `real` (a file of the project at `root`).
pub(crate) fn import_state(root: &Path, real: &Path) -> ImportState {
    let mut import = real.as_os_str().to_owned();
    import.push(".import");
    let Ok(text) = std::fs::read_to_string(PathBuf::from(import)) else {
        return ImportState::Missing;
    };
    match config_value(&text, "importer") {
        Some("keep") => return ImportState::NotImported("kept"),
        Some("skip") => return ImportState::NotImported("skipped"),
        _ => {}
    }
    if config_value(&text, "valid") == Some("false") {
        return ImportState::Failed;
    }
    let res_to_real = |p: &str| p.strip_prefix("res://").map(|r| root.join(r));
    let dests: Vec<&str> = config_value(&text, "dest_files")
        .map(|l| {
            l.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|s| s.trim().trim_matches('"'))
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    for d in &dests {
        if res_to_real(d).is_none_or(|p| !p.is_file()) {
            return ImportState::OutputMissing((*d).to_string());
        }
    }
    // Godot records the source's MD5 beside the imported files.
    let recorded = dests
        .first()
        .and_then(|d| import_base(d))
        .and_then(|base| res_to_real(&format!("{base}.md5")))
        .and_then(|p| std::fs::read_to_string(p).ok());
    if let (Some(recorded), Ok(bytes)) = (recorded, std::fs::read(real))
        && let Some(md5) = config_value(&recorded, "source_md5")
    {
        use md5::Digest;
        if hex::encode(md5::Md5::digest(&bytes)) != md5 {
            return ImportState::Stale;
        }
    }
    ImportState::Current
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportStatusArgs {
    /// A folder or file (default res://).
    #[serde(default)]
    path: Option<ResPath>,
    /// List every importable file, not only those whose import is missing, failed or stale.
    #[serde(default)]
    all: bool,
    #[serde(default)]
    offset: Option<u32>,
    /// 1-1000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// Most files one get_import_status walks.
const IMPORT_WALK_CAP: usize = 100_000;

/// One importable file and its import state.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImportRow {
    pub path: String,
    pub status: &'static str,
    /// For `output_missing`: the imported file that is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImportStatusOut {
    pub files: Vec<ImportRow>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// Files per status.
    pub counts: BTreeMap<&'static str, u64>,
    pub importable_files: usize,
    pub capped: bool,
}

async fn get_import_status(
    Call { state, args, .. }: Call<ImportStatusArgs>,
) -> Out<ImportStatusOut> {
    let limit = args.limit.unwrap_or(200);
    if !(1..=1000).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–1000"));
    }
    let start = args.path.unwrap_or_else(ResPath::root);
    let real = state.project.resolve("path", &start)?;
    if !real.exists() {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            format!("{start} does not exist"),
        )
        .param("path"));
    }
    let root = state.project.root().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut files = walk_importable(&state, &start, &real)?;
        let capped = files.len() > IMPORT_WALK_CAP;
        files.truncate(IMPORT_WALK_CAP);
        files.sort();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut listed = Vec::new();
        for f in &files {
            let st = import_state(&root, f);
            *counts.entry(st.as_str()).or_default() += 1;
            if args.all || st.is_problem() {
                let rel = f.strip_prefix(&root).unwrap_or(f).to_string_lossy();
                let missing = match &st {
                    ImportState::OutputMissing(d) => Some(d.clone()),
                    _ => None,
                };
                listed.push(ImportRow {
                    path: format!("res://{rel}"),
                    status: st.as_str(),
                    missing,
                });
            }
        }
        let total = listed.len();
        let offset = args.offset.unwrap_or(0) as usize;
        let page: Vec<ImportRow> = listed
            .into_iter()
            .skip(offset)
            .take(limit as usize)
            .collect();
        let next = offset + page.len();
        Ok(ImportStatusOut {
            files: page,
            total,
            next_offset: (next < total).then_some(next),
            counts,
            importable_files: files.len(),
            capped,
        })
    })
    .await
    .map_err(|e| ToolError::internal(format!("import status task failed: {e}")))?
}

/// The importable files under `start` (or `start` itself), as the project walker
/// ([`walk_project`]) finds them — the files `list_files` lists: no hidden entries
/// (`.godot` among them), no folder with a `.gdignore`, a symlink only to a file
/// inside the project. Each as its path in the project (a link's own path: its
/// `.import` sits beside it).
fn walk_importable(
    state: &AppState,
    start: &ResPath,
    real: &Path,
) -> Result<Vec<PathBuf>, ToolError> {
    let root = state.project.root();
    let importable = |res: &ResPath| {
        res.extension()
            .is_some_and(|e| is_importable(&e.to_ascii_lowercase()))
    };
    if real.is_file() {
        return Ok(if importable(start) {
            vec![root.join(start.rel())]
        } else {
            Vec::new()
        });
    }
    let how = Walk {
        recursive: true,
        skip: |_| false,
        too_many: project_too_large,
    };
    let mut out = Vec::new();
    walk_project(state, real, start, &how, &mut 0, &mut |res, _, _| {
        if importable(&res) {
            out.push(root.join(res.rel()));
        }
    })?;
    Ok(out)
}

/// The operator's allowed folders (`Config::import_dirs`), symlinks resolved (a folder
/// that does not exist allows nothing).
fn import_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter()
        .filter(|d| d.is_absolute())
        .filter_map(|d| d.canonicalize().ok())
        .collect()
}

/// Where import_asset may read `source` from: symlinks resolved first, then it must lie
/// in the project or in one of the operator's `allowed` folders. Returns the resolved path.
pub(crate) fn decide_source(
    project_root: &Path,
    allowed_dirs: &[PathBuf],
    source: &str,
) -> Result<PathBuf, ToolError> {
    let path = Path::new(source);
    if !path.is_absolute() {
        return Err(ToolError::invalid_params(
            "source",
            "source must be an absolute path of a file on this machine",
        ));
    }
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    let dirs = import_dirs(allowed_dirs);
    let allowed = |p: &Path| p.starts_with(&root) || dirs.iter().any(|d| p.starts_with(d));
    let refused = || {
        ToolError::new(
            ErrorCode::PathRefused,
            format!(
                "{source} is outside the project and outside every folder the operator allows \
                 import_asset to read; nothing was read"
            ),
        )
        .param("source")
        .hint(format!(
            "The operator allows a folder with serve --import-dir DIR or {ENV_IMPORT_DIRS}."
        ))
    };
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(refused());
    }
    let real = match path.canonicalize() {
        Ok(real) => real,
        // Whether a file exists outside the allowed folders is not told either.
        Err(_) if !allowed(path) => return Err(refused()),
        Err(e) => {
            return Err(
                ToolError::new(ErrorCode::ResourceNotFound, format!("{source}: {e}"))
                    .param("source"),
            );
        }
    };
    if !allowed(&real) {
        return Err(refused());
    }
    if !real.is_file() {
        return Err(ToolError::invalid_params(
            "source",
            format!("{source} is not a regular file"),
        ));
    }
    Ok(real)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportAssetArgs {
    /// Absolute path (or res:// path) of the image, model or sound to copy.
    source: String,
    /// Where in the project, with the same extension.
    dest: ResPath,
    /// Wait at most this long for the editor's import, 1000-600000 ms (default 60000).
    #[serde(default)]
    #[schemars(range(min = 1000, max = 600000))]
    timeout_ms: Option<u64>,
}

/// Reads `real` and checks that what was read is the file that was decided on: a path
/// swapped for a symlink in between is refused, not followed.
fn read_decided(real: &Path) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let io = |e: std::io::Error| {
        ToolError::new(ErrorCode::Io, format!("{}: {e}", real.display())).param("source")
    };
    let mut f = godot_mcp_os::fs::open_nofollow(real).map_err(io)?;
    let opened = f.metadata().map_err(io)?;
    let opened_id = godot_mcp_os::fs::file_id(&f, &opened).map_err(io)?;
    let decided_id = godot_mcp_os::fs::path_id(real).map_err(io)?;
    if opened_id != decided_id || !opened.is_file() {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            format!(
                "{} changed while it was read; nothing was read",
                real.display()
            ),
        )
        .param("source"));
    }
    let max = crate::planes::project::MAX_WRITE_BYTES as u64;
    if opened.len() > max {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} is {} bytes; at most {max}",
                real.display(),
                opened.len()
            ),
        )
        .param("source"));
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Where import_asset copied from (added to the write's effect).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImportSource {
    pub source: String,
}

/// What the copy added: the editor's import of it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Imported {
    pub import: ImportOutcome,
}

/// The import after the copy: its status, or `pending` and why.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImportOutcome {
    pub status: &'static str,
    pub editor_connected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

type ImportPlan = Plan<
    crate::tools::Also<crate::tools::kit::file_write::FileEffect, ImportSource>,
    crate::tools::Also<crate::tools::Committed, Imported>,
>;

fn plan_import_asset(state: Arc<AppState>, args: ImportAssetArgs) -> Result<ImportPlan, ToolError> {
    let timeout = args.timeout_ms.unwrap_or(60_000);
    if !(1000..=600_000).contains(&timeout) {
        return Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1000–600000",
        ));
    }
    let ext = args.dest.extension().unwrap_or_default();
    if !ASSET_EXTENSIONS.contains(&ext.as_str()) {
        return Err(ToolError::invalid_params(
            "dest",
            format!(
                "{} is not an image, model or sound Godot imports ({})",
                args.dest,
                ASSET_EXTENSIONS.join(", ")
            ),
        ));
    }
    if args.dest.rel().split('/').next() == Some(".godot") {
        return Err(ToolError::invalid_params(
            "dest",
            ".godot/ is Godot's cache, not a place for assets",
        ));
    }
    let real = if args.source.starts_with("res://") {
        // A copy inside the project: checked like every res:// path.
        let res = ResPath::parse(&args.source)
            .map_err(|e| ToolError::new(ErrorCode::PathRefused, e.0).param("source"))?;
        let real = state.project.resolve("source", &res)?;
        if !real.is_file() {
            return Err(ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("{res} is not a file"),
            )
            .param("source"));
        }
        real
    } else {
        decide_source(
            state.project.root(),
            &state.config.import_dirs,
            &args.source,
        )?
    };
    let src_ext = real
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if src_ext != ext {
        return Err(ToolError::invalid_params(
            "dest",
            format!("the source is .{src_ext}; dest must keep that extension (it is .{ext})"),
        ));
    }
    let bytes = read_decided(&real)?;
    let dest = args.dest.clone();
    let source = ImportSource {
        source: real.display().to_string(),
    };
    let st = state.clone();
    Ok(crate::tools::kit::file_write::plan_write(
        &state,
        "dest",
        args.dest,
        bytes,
        Expect::Anything,
        Persistence::written_to_disk(),
    )?
    .map_effect(|write| crate::tools::Also {
        base: write,
        more: source,
    })
    .map_applied(move |committed| crate::tools::Also {
        base: committed,
        more: Imported {
            import: wait_for_import(&st, &dest, Duration::from_millis(timeout)),
        },
    }))
}

/// After the copy: the connected editor rescans (which imports the new file), then the
/// import state is read from disk. Without an editor the import is pending, and says so.
fn wait_for_import(state: &AppState, dest: &ResPath, limit: Duration) -> ImportOutcome {
    let real = state.project.root().join(dest.rel());
    let pending = |editor_connected, reason: String| ImportOutcome {
        status: "pending",
        editor_connected,
        reason: Some(reason),
        waited_ms: None,
        timed_out: None,
    };
    if crate::tools::kit::editor::connected(state).is_err() {
        return pending(
            false,
            "no editor is connected: Godot imports the file when an editor opens the project \
             or rescans (rescan_filesystem)"
                .into(),
        );
    }
    match scan_and_wait(state, limit) {
        Ok(scan) => ImportOutcome {
            status: import_state(state.project.root(), &real).as_str(),
            editor_connected: true,
            reason: None,
            waited_ms: Some(scan.waited_ms),
            timed_out: None,
        },
        Err(e) => ImportOutcome {
            timed_out: Some(e.code == ErrorCode::Timeout),
            ..pending(true, e.message)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_base_finds_the_path_hash() {
        let h = "218a8f2b3041327d8a5756f3a245f83b";
        assert_eq!(
            import_base(&format!("res://.godot/imported/my-icon.svg-{h}.ctex")),
            Some(format!("res://.godot/imported/my-icon.svg-{h}").as_str())
        );
        assert_eq!(
            import_base(&format!("res://.godot/imported/a.png-{h}.s3tc.ctex")),
            Some(format!("res://.godot/imported/a.png-{h}").as_str())
        );
        assert_eq!(import_base("res://.godot/imported/a.png.ctex"), None);
    }

    #[test]
    fn a_source_outside_the_project_and_allowed_folders_is_refused_after_resolving_links() {
        let project = tempfile::tempdir().unwrap();
        let secret = tempfile::tempdir().unwrap();
        std::fs::write(secret.path().join("id_ed25519.png"), b"key").unwrap();
        // A symlink inside the project that points out is decided by its target.
        godot_mcp_os::fs::symlink(
            secret.path().join("id_ed25519.png"),
            project.path().join("innocent.png"),
        )
        .unwrap();
        for source in [
            secret.path().join("id_ed25519.png"),
            project.path().join("innocent.png"),
        ] {
            let e = decide_source(project.path(), &[], source.to_str().unwrap()).unwrap_err();
            assert_eq!(e.code, ErrorCode::PathRefused, "{source:?}");
        }
        std::fs::write(project.path().join("in.png"), b"png").unwrap();
        let inside = project.path().join("in.png");
        assert!(decide_source(project.path(), &[], inside.to_str().unwrap()).is_ok());
        assert_eq!(
            decide_source(project.path(), &[], "in.png")
                .unwrap_err()
                .code,
            ErrorCode::InvalidParams
        );
        // A missing file outside is refused like a present one: no existence oracle.
        let missing = secret.path().join("nope.png");
        let e = decide_source(project.path(), &[], missing.to_str().unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
        // The operator's folders (`Config::import_dirs`) allow what lies in them.
        let allowed = [secret.path().to_path_buf()];
        let key = secret.path().join("id_ed25519.png");
        let real = decide_source(project.path(), &allowed, key.to_str().unwrap()).unwrap();
        assert_eq!(real, key.canonicalize().unwrap());
    }
}
