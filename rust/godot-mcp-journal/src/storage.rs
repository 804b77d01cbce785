//! The seam every durable file effect of a journaled write goes through: temp
//! file creation, fsync of a file, rename (plain, no-replace, exchange), unlink,
//! directory creation and directory fsync.
//!
//! [`RealStorage`] performs them. With the `failpoints` feature, `PowerLossSim`
//! performs them too and additionally keeps the image a power loss would leave:
//! a file's bytes become durable only when it is fsynced, a directory entry
//! (create, rename, unlink) only when its directory is fsynced. Its
//! `PowerLossSim::power_loss` rewrites the disk to that image, dropping every
//! write, rename and create that was not made durable — what redb's and SQLite's
//! crash-test VFSes do. A `kill -9` keeps the page cache, so only this makes a
//! missing fsync visible to a test.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

/// The durable file effects of a journaled write.
pub trait Storage: Send + Sync {
    /// Creates `path` exclusively with `mode` and writes `bytes`, not synced.
    fn create_temp(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<File>;
    /// Makes `file` (open at `path`) durable: its bytes and metadata.
    fn sync_file(&self, path: &Path, file: &File) -> io::Result<()>;
    /// Makes the data of `file` (open at `path`) durable (`fdatasync`).
    fn sync_data(&self, path: &Path, file: &File) -> io::Result<()>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Renames `from` to `to` only if `to` does not exist (`AlreadyExists` if it does).
    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Atomically exchanges the entries `a` and `b` (both must exist).
    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()>;
    /// Unlinks `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Creates the directory `path` (its parent must exist).
    fn create_dir(&self, path: &Path) -> io::Result<()>;
    /// Makes the entries of directory `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Makes every rename, unlink and write already done on the file system
    /// holding `root` durable (`syncfs`; see `godot_mcp_os::fs::sync_filesystem`).
    /// `Unsupported` where the OS cannot (Windows): the caller then syncs
    /// each directory it claims instead.
    fn sync_fs(&self, root: &Path) -> io::Result<()> {
        godot_mcp_os::fs::sync_filesystem(&godot_mcp_os::fs::open_dir(root)?)
    }
}

/// Makes every entry under `root` that `dirs` names durable: one [`Storage::sync_fs`],
/// or, where the OS has none, each of `dirs` synced in turn.
pub fn sync_tree(storage: &dyn Storage, root: &Path, dirs: &[PathBuf]) -> io::Result<()> {
    match storage.sync_fs(root) {
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {
            for dir in dirs {
                storage.sync_dir(dir)?;
            }
            Ok(())
        }
        other => other,
    }
}

/// One storage operation, as [`Injected`]'s hook sees it before it runs.
#[derive(Clone, Copy, Debug)]
pub enum StorageOp<'a> {
    CreateTemp(&'a Path),
    SyncFile(&'a Path),
    SyncData(&'a Path),
    Rename(&'a Path, &'a Path),
    RenameNoreplace(&'a Path, &'a Path),
    Exchange(&'a Path, &'a Path),
    RemoveFile(&'a Path),
    CreateDir(&'a Path),
    SyncDir(&'a Path),
    SyncFs(&'a Path),
}

/// A storage (`inner`: the file system, [`RealStorage`], or the power-loss
/// simulation) with a hook run before every operation: fault injection for tests. The
/// hook fails the operation it picks by returning an error; `state` is its own
/// (counters, switches), which a test reads through its `Arc`.
pub struct Injected<S, T = RealStorage> {
    pub state: S,
    pub hook: fn(&S, StorageOp<'_>) -> io::Result<()>,
    pub inner: T,
}

impl<S: Send + Sync, T: Storage> Storage for Injected<S, T> {
    fn create_temp(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<File> {
        (self.hook)(&self.state, StorageOp::CreateTemp(path))?;
        self.inner.create_temp(path, bytes, mode)
    }
    fn sync_file(&self, path: &Path, file: &File) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::SyncFile(path))?;
        self.inner.sync_file(path, file)
    }
    fn sync_data(&self, path: &Path, file: &File) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::SyncData(path))?;
        self.inner.sync_data(path, file)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::Rename(from, to))?;
        self.inner.rename(from, to)
    }
    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::RenameNoreplace(from, to))?;
        self.inner.rename_noreplace(from, to)
    }
    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::Exchange(a, b))?;
        self.inner.exchange(a, b)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::RemoveFile(path))?;
        self.inner.remove_file(path)
    }
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::CreateDir(path))?;
        self.inner.create_dir(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::SyncDir(dir))?;
        self.inner.sync_dir(dir)
    }
    fn sync_fs(&self, root: &Path) -> io::Result<()> {
        (self.hook)(&self.state, StorageOp::SyncFs(root))?;
        self.inner.sync_fs(root)
    }
}

/// Writes `bytes` to `temp` (created exclusively, mode `mode`), makes it durable and
/// renames it over `target`: the bytes are durable, the rename only once the caller
/// syncs the folder. On failure `temp` is removed.
pub fn stage_and_rename(
    storage: &dyn Storage,
    temp: &Path,
    target: &Path,
    bytes: &[u8],
    mode: u32,
) -> io::Result<()> {
    let result = (|| {
        let file = storage.create_temp(temp, bytes, mode)?;
        storage.sync_file(temp, &file)?;
        drop(file);
        storage.rename(temp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(temp);
    }
    result
}

/// Whether `path` names one of the journal's own temporaries (`.gmcp-…`).
pub fn is_journal_temp(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(".gmcp-"))
}

/// The storage the journal uses outside tests: the file system itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealStorage;

impl Storage for RealStorage {
    fn create_temp(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<File> {
        let mut file =
            godot_mcp_os::fs::create_mode(OpenOptions::new().write(true).create_new(true), mode)
                .open(path)?;
        file.write_all(bytes)?;
        Ok(file)
    }

    fn sync_file(&self, _path: &Path, file: &File) -> io::Result<()> {
        file.sync_all()
    }

    fn sync_data(&self, _path: &Path, file: &File) -> io::Result<()> {
        file.sync_data()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()> {
        godot_mcp_os::fs::rename_noreplace(from, to)
    }

    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()> {
        godot_mcp_os::fs::exchange(a, b)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        fs::create_dir(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        godot_mcp_os::fs::sync_dir(dir)
    }
}

/// One file's `sync_data`, run on a long-lived thread so the journal can
/// overlap it with its own fsyncs without spawning a thread per write (the
/// spawn showed up in the write's profile).
/// How long [`BackgroundSync::wait`] polls before it blocks.
const SPIN_MICROS: u64 = 50;

pub(crate) struct BackgroundSync {
    request: mpsc::Sender<()>,
    done: mpsc::Receiver<io::Result<()>>,
}

impl BackgroundSync {
    /// Starts the thread that syncs `path` through `storage` on each request,
    /// through one handle opened here (not an open and a close per sync).
    pub(crate) fn start(storage: Arc<dyn Storage>, path: PathBuf) -> io::Result<Self> {
        // Writable: Windows flushes only a handle opened for writing.
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let (request, requests) = mpsc::channel::<()>();
        let (finished, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("journal-log-sync".into())
            .spawn(move || {
                // Ends when the journal (the sender) is dropped.
                for () in requests {
                    if finished.send(storage.sync_data(&path, &file)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Self { request, done })
    }

    /// Starts one sync; [`BackgroundSync::wait`] returns its result.
    pub(crate) fn begin(&self) -> io::Result<()> {
        self.request
            .send(())
            .map_err(|_| io::Error::other("the journal's sync thread is gone"))
    }

    /// Waits for the sync started by [`BackgroundSync::begin`].
    pub(crate) fn wait(&self) -> io::Result<()> {
        // The sync usually ends within microseconds of the caller's own
        // fsync: poll briefly before sleeping, so the answer is not delayed by
        // a wake-up.
        let until = std::time::Instant::now() + std::time::Duration::from_micros(SPIN_MICROS);
        while std::time::Instant::now() < until {
            match self.done.try_recv() {
                Ok(result) => return result,
                Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
                Err(mpsc::TryRecvError::Disconnected) => break,
            }
        }
        self.done
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the journal's sync thread is gone")))
    }
}

#[cfg(feature = "failpoints")]
pub use sim::PowerLossSim;

#[cfg(feature = "failpoints")]
mod sim {
    use std::collections::{BTreeMap, HashMap};
    use std::ffi::OsString;
    use std::fs::{self, File};
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use super::{RealStorage, Storage};

    /// An inode of the model: what is in the page cache, and what a power loss
    /// would leave (`None`: never fsynced, its bytes are lost).
    #[derive(Clone, Debug)]
    enum Node {
        File {
            cached: Vec<u8>,
            durable: Option<Vec<u8>>,
            mode: u32,
        },
        Dir,
    }

    /// A directory's entries as the page cache has them and as the disk does.
    #[derive(Clone, Debug, Default)]
    struct DirImage {
        cached: BTreeMap<OsString, usize>,
        durable: BTreeMap<OsString, usize>,
    }

    #[derive(Debug, Default)]
    struct Model {
        nodes: Vec<Node>,
        dirs: HashMap<PathBuf, DirImage>,
        /// Files outside the model's directories whose whole content is tracked
        /// by `sync_data` (the journal's WAL): their last durable bytes.
        whole_files: HashMap<PathBuf, Option<Vec<u8>>>,
    }

    /// A [`Storage`] that performs every effect and keeps the image a power loss
    /// would leave; see the module documentation.
    ///
    /// Model: a directory is tracked from the first effect in it, and what it
    /// held then counts as durable. A file's bytes are durable once fsynced; a
    /// directory entry (create, rename, exchange, unlink, mkdir) once its
    /// directory is fsynced. [`PowerLossSim::track_whole_file`] adds a file
    /// written by someone else (SQLite's WAL): only the bytes it had when last
    /// `sync_data`'d through this seam (or when tracked) survive.
    #[derive(Debug, Default)]
    pub struct PowerLossSim {
        model: Mutex<Model>,
    }

    fn name_of(path: &Path) -> io::Result<(PathBuf, OsString)> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{} has no file name", path.display())))?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok((dir, name.to_owned()))
    }

    impl Model {
        fn dir(&mut self, dir: &Path) -> io::Result<&mut DirImage> {
            if !self.dirs.contains_key(dir) {
                let mut image = DirImage::default();
                for entry in fs::read_dir(dir)? {
                    let entry = entry?;
                    let meta = entry.metadata()?;
                    let node = if meta.is_dir() {
                        Node::Dir
                    } else if meta.is_file() {
                        let bytes = fs::read(entry.path())?;
                        Node::File {
                            cached: bytes.clone(),
                            durable: Some(bytes),
                            mode: godot_mcp_os::fs::mode(&meta),
                        }
                    } else {
                        continue;
                    };
                    self.nodes.push(node);
                    image.cached.insert(entry.file_name(), self.nodes.len() - 1);
                }
                image.durable = image.cached.clone();
                self.dirs.insert(dir.to_path_buf(), image);
            }
            Ok(self.dirs.get_mut(dir).expect("inserted above"))
        }

        fn lookup(&mut self, path: &Path) -> io::Result<usize> {
            let (dir, name) = name_of(path)?;
            self.dir(&dir)?
                .cached
                .get(&name)
                .copied()
                .ok_or_else(|| io::Error::other(format!("{} not in the model", path.display())))
        }

        /// Starts tracking the directory of `path` (before an effect in it).
        fn track(&mut self, path: &Path) -> io::Result<()> {
            let (dir, _) = name_of(path)?;
            self.dir(&dir).map(|_| ())
        }

        fn unlink(&mut self, path: &Path) -> io::Result<Option<usize>> {
            let (dir, name) = name_of(path)?;
            Ok(self.dir(&dir)?.cached.remove(&name))
        }

        fn link(&mut self, path: &Path, node: usize) -> io::Result<()> {
            let (dir, name) = name_of(path)?;
            self.dir(&dir)?.cached.insert(name, node);
            Ok(())
        }
    }

    impl PowerLossSim {
        /// A model with nothing tracked yet.
        pub fn new() -> Self {
            Self::default()
        }

        fn with<T>(&self, f: impl FnOnce(&mut Model) -> io::Result<T>) -> io::Result<T> {
            let mut model = self.model.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut model)
        }

        /// A rename by `rename` (one of the real renames): the model moves the
        /// node from `from` to `to` once the real one succeeded.
        fn moved(
            &self,
            from: &Path,
            to: &Path,
            rename: impl FnOnce() -> io::Result<()>,
        ) -> io::Result<()> {
            self.with(|m| {
                m.lookup(from)?;
                m.track(to)?;
                rename()?;
                let node = m.unlink(from)?.expect("looked up above");
                m.link(to, node)
            })
        }

        /// Tracks `path` as a whole: its current bytes count as durable, and
        /// afterwards only what it holds at a `sync_data` through this seam.
        pub fn track_whole_file(&self, path: &Path) -> io::Result<()> {
            let bytes = match fs::read(path) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            self.with(|m| {
                m.whole_files.insert(path.to_path_buf(), bytes);
                Ok(())
            })
        }

        /// Rewrites the disk to what a power loss now would leave: every tracked
        /// directory holds exactly its durable entries, each file exactly its
        /// durable bytes (empty if never fsynced), each whole file its last
        /// synced bytes. The process must not touch these files afterwards
        /// (the caller exits at once, as the machine would have stopped).
        pub fn power_loss(&self) -> io::Result<()> {
            self.with(|m| {
                let mut dirs: Vec<PathBuf> = m.dirs.keys().cloned().collect();
                dirs.sort_by_key(|d| d.components().count());
                for dir in dirs {
                    if !dir.is_dir() {
                        continue; // removed with a non-durable parent entry
                    }
                    let image = m.dirs[&dir].clone();
                    for name in image.cached.keys() {
                        if image.durable.contains_key(name) {
                            continue;
                        }
                        let path = dir.join(name);
                        match fs::symlink_metadata(&path) {
                            Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path)?,
                            Ok(_) => fs::remove_file(&path)?,
                            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                            Err(e) => return Err(e),
                        }
                    }
                    for (name, &node) in &image.durable {
                        let path = dir.join(name);
                        match &m.nodes[node] {
                            Node::Dir => fs::create_dir_all(&path)?,
                            Node::File { durable, mode, .. } => {
                                if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                                    fs::remove_dir_all(&path)?;
                                }
                                // A fresh inode: nothing cached of the old one survives.
                                let _ = fs::remove_file(&path);
                                fs::write(&path, durable.as_deref().unwrap_or_default())?;
                                godot_mcp_os::fs::set_mode(&path, *mode)?;
                            }
                        }
                    }
                }
                for (path, durable) in &m.whole_files {
                    match durable {
                        Some(bytes) => fs::write(path, bytes)?,
                        None => match fs::remove_file(path) {
                            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                            _ => {}
                        },
                    }
                    // SQLite's shared-memory index is not durable state; a
                    // stale one must not describe frames that are gone.
                    if let Some(base) = path.to_str().and_then(|p| p.strip_suffix("-wal")) {
                        match fs::remove_file(format!("{base}-shm")) {
                            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                            _ => {}
                        }
                    }
                }
                Ok(())
            })
        }
    }

    impl Storage for PowerLossSim {
        fn create_temp(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<File> {
            self.with(|m| {
                m.dir(path.parent().unwrap_or(Path::new(".")))?;
                let file = RealStorage.create_temp(path, bytes, mode)?;
                m.nodes.push(Node::File {
                    cached: bytes.to_vec(),
                    durable: None,
                    mode,
                });
                let node = m.nodes.len() - 1;
                m.link(path, node)?;
                Ok(file)
            })
        }

        fn sync_file(&self, path: &Path, file: &File) -> io::Result<()> {
            self.with(|m| {
                RealStorage.sync_file(path, file)?;
                let node = m.lookup(path)?;
                if let Node::File {
                    cached, durable, ..
                } = &mut m.nodes[node]
                {
                    *durable = Some(cached.clone());
                }
                Ok(())
            })
        }

        fn sync_data(&self, path: &Path, file: &File) -> io::Result<()> {
            self.with(|m| {
                RealStorage.sync_data(path, file)?;
                if let Some(durable) = m.whole_files.get_mut(path) {
                    *durable = Some(fs::read(path)?);
                }
                Ok(())
            })
        }

        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            self.moved(from, to, || RealStorage.rename(from, to))
        }

        fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()> {
            self.moved(from, to, || RealStorage.rename_noreplace(from, to))
        }

        fn exchange(&self, a: &Path, b: &Path) -> io::Result<()> {
            self.with(|m| {
                let (na, nb) = (m.lookup(a)?, m.lookup(b)?);
                RealStorage.exchange(a, b)?;
                m.link(a, nb)?;
                m.link(b, na)
            })
        }

        fn remove_file(&self, path: &Path) -> io::Result<()> {
            self.with(|m| {
                m.track(path)?;
                RealStorage.remove_file(path)?;
                m.unlink(path)?;
                Ok(())
            })
        }

        fn create_dir(&self, path: &Path) -> io::Result<()> {
            self.with(|m| {
                let (dir, _) = name_of(path)?;
                m.dir(&dir)?;
                RealStorage.create_dir(path)?;
                m.nodes.push(Node::Dir);
                let node = m.nodes.len() - 1;
                m.link(path, node)
            })
        }

        fn sync_dir(&self, dir: &Path) -> io::Result<()> {
            self.with(|m| {
                RealStorage.sync_dir(dir)?;
                let image = m.dir(dir)?;
                image.durable = image.cached.clone();
                Ok(())
            })
        }

        /// Every tracked directory and file under `root` made durable (the model
        /// holds one file system).
        fn sync_fs(&self, root: &Path) -> io::Result<()> {
            self.with(|m| {
                RealStorage.sync_fs(root)?;
                for (dir, image) in m.dirs.iter_mut() {
                    if dir.starts_with(root) {
                        image.durable = image.cached.clone();
                    }
                }
                for node in &mut m.nodes {
                    if let Node::File {
                        cached, durable, ..
                    } = node
                    {
                        *durable = Some(cached.clone());
                    }
                }
                Ok(())
            })
        }
    }
}
