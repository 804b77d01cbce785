//! Each OS's process table and boundary against real processes. The Unix tests
//! run on Linux here and on macOS in the workflow matrix; the Windows tests run
//! only in the matrix (this crate is compile-checked for Windows on Linux by
//! scripts/cross-check.sh).

#[cfg(unix)]
mod unix {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use godot_mcp_os::group::{self, GroupSignal};
    use godot_mcp_os::{NONCE_ENV, ProcessTable, process_table};

    fn procs() -> &'static dyn ProcessTable {
        process_table::os()
    }

    /// Polls `cond` (a readiness signal the OS offers no event for) for at most
    /// 10 s.
    fn until(what: &str, mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "never: {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A group leader `sh` with `nonce` on its command line and in its
    /// environment; once released (one line on stdin) it starts a `sleep`
    /// child that has the nonce only in its inherited environment.
    fn leader(nonce: &str) -> Child {
        Command::new("/bin/sh")
            .arg("-c")
            .arg("read -r _; sleep 30 & wait")
            .arg("godot-mcp-os-test")
            .arg(format!("--godot-mcp-nonce={nonce}"))
            .env(NONCE_ENV, nonce)
            .process_group(0)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The host rules of a real folder: case-insensitive exactly where the file
    /// system finds `A` when `a` exists (macOS asks the volume; Linux is
    /// case-sensitive).
    #[test]
    fn a_folder_s_case_rule_is_its_file_system_s() {
        let dir = std::env::temp_dir().join(format!("godot-mcp-os-case-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a"), b"").unwrap();
        let folds = dir.join("A").exists();
        std::fs::remove_dir_all(&dir).unwrap();
        let host = godot_mcp_os::paths::host_of(&std::env::temp_dir());
        if cfg!(target_os = "linux") {
            assert_eq!(host, godot_mcp_os::paths::Host::LINUX);
        } else {
            assert_eq!(host.case_insensitive, folds);
        }
    }

    #[test]
    fn own_process_reads() {
        let me = std::process::id() as i32;
        let s = procs().stat(me).unwrap();
        assert!(procs().observable());
        assert!(s.start_time > 0);
        assert!(procs().is_live(me, &s));
        assert!(procs().group_members(s.pgrp).unwrap().contains(&me));
        assert!(procs().boot_id().is_some_and(|b| !b.is_empty()));
        // The second read is the same identity.
        assert_eq!(procs().stat(me).unwrap().start_time, s.start_time);
    }

    #[test]
    fn a_launch_tree_is_identified_by_start_time_and_nonce_and_killed_pinned() {
        let nonce = format!("{:032x}", std::process::id() as u128 * 7919);
        let mut child = leader(&nonce);
        let pid = child.id() as i32;
        let t = procs();
        let stat = t.stat(pid).unwrap();
        assert_eq!(stat.pgrp, pid, "the leader leads its own group");
        // spawn() can return before the kernel shows the exec'd command line (seen
        // under load): wait for it, then the checks below are about its content.
        until("the leader's command line is its own", || {
            t.cmdline_contains(pid, &nonce)
        });
        assert!(!t.cmdline_contains(pid, "not-the-nonce"));
        assert!(t.environ_contains(pid, &format!("{NONCE_ENV}={nonce}")));
        assert!(!t.environ_contains(pid, &format!("{NONCE_ENV}=other")));
        // Readable, so never "hidden" (what keeps a boundary unproven).
        assert!(!t.environ_hidden(pid));

        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        until("the sleep child joined the group", || {
            t.group_members(pid).unwrap().len() == 2
        });
        let kid = *t
            .group_members(pid)
            .unwrap()
            .iter()
            .find(|p| **p != pid)
            .unwrap();
        let kid_stat = t.stat(kid).unwrap();
        assert_eq!(kid_stat.pgrp, pid);
        assert!(kid_stat.start_time >= stat.start_time);
        assert!(t.carries_nonce(kid, &nonce), "the nonce is inherited");
        assert!(!t.cmdline_contains(kid, &nonce));
        assert!(t.groups().unwrap().get(&pid).is_some_and(|m| m.len() == 2));

        // A stale start time or a wrong nonce: not the process, not signalled.
        t.kill_pinned(kid, kid_stat.start_time + 1, &nonce);
        t.kill_pinned(kid, kid_stat.start_time, "0000");
        assert!(t.stat(kid).is_some_and(|s| t.is_live(kid, &s)));
        // The exact identity: killed.
        t.kill_pinned(kid, kid_stat.start_time, &nonce);
        // (Its parent then ends too: `wait` returns.)
        until("the pinned kill ended the child", || {
            !t.group_members(pid).unwrap().contains(&kid)
        });

        assert!(group::signal(pid, GroupSignal::Kill));
        child.wait().unwrap();
        until("the group is empty", || {
            t.group_members(pid).unwrap().is_empty()
        });
        // A killed member can stay a zombie (not a member) until its new
        // parent reaps it, and a group of zombies still takes a signal: the
        // group is gone once that ends (a flake under load otherwise).
        until("no such group any more", || {
            !group::signal(pid, GroupSignal::Term)
        });
    }
}

#[cfg(windows)]
mod windows {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use godot_mcp_os::job::{self, JobObject};
    use godot_mcp_os::process_table::{self, JobState};

    fn until(what: &str, mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(20), "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `cmd` held at a gate (one line on stdin), then running `ping` as its
    /// child for a minute: a two-process tree.
    fn gated_tree() -> std::process::Child {
        Command::new("cmd.exe")
            .args(["/d", "/c", "set /p _= & ping -n 60 127.0.0.1 >NUL"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    }

    #[test]
    fn identity_is_pid_and_creation_time_and_the_table_is_unobservable() {
        let t = process_table::os();
        assert!(
            !t.observable(),
            "no process groups: reconciliation quarantines"
        );
        assert!(t.observes_jobs(), "job-bounded launches are reconciled");
        let me = std::process::id() as i32;
        let s = t.stat(me).unwrap();
        assert!(s.start_time > 0);
        assert!(t.is_live(me, &s));
        assert!(t.live().unwrap().iter().any(|(p, _)| *p == me));
    }

    #[test]
    fn a_job_holds_the_whole_tree_and_terminates_it() {
        let t = process_table::os();
        let job =
            JobObject::create(Some(&format!("godot-mcp-test-{}", std::process::id()))).unwrap();
        let mut child = gated_tree();
        let pid = child.id();
        let created = job::creation_time(&child).unwrap();
        assert_eq!(t.stat(pid as i32).unwrap().start_time, created);
        job.assign(&child).unwrap();
        child.stdin.take().unwrap().write_all(b"go\r\n").unwrap();
        until("ping joined the job", || job.members().unwrap().len() >= 2);
        assert!(job.members().unwrap().contains(&pid));

        job.terminate(1).unwrap();
        child.wait().unwrap();
        until("the job is empty", || job.members().unwrap().is_empty());
        // The handle std holds keeps the exited process's object: not live.
        let after = t.stat(pid as i32).unwrap();
        assert_eq!(after.start_time, created);
        assert!(!t.is_live(pid as i32, &after));
    }

    #[test]
    fn closing_the_last_job_handle_kills_the_tree() {
        let name = format!("godot-mcp-test-close-{}", std::process::id());
        let job = JobObject::create(Some(&name)).unwrap();
        let mut child = gated_tree();
        job.assign(&child).unwrap();
        child.stdin.take().unwrap().write_all(b"go\r\n").unwrap();
        until("ping joined the job", || job.members().unwrap().len() >= 2);
        assert!(JobObject::open(&name).unwrap().is_some());
        drop(job);
        child.wait().unwrap();
        // The name lives as long as the job object: until its last process is gone.
        until("the job is gone with its tree", || {
            JobObject::open(&name).unwrap().is_none()
        });
    }

    /// The process plane's gate on Windows: created suspended, put in a new
    /// named job, resumed. Until the resume nothing of the child runs (its
    /// `ping` does not exist); afterwards its child is in the job too, and the
    /// table finds, terminates and proves the job empty by its name alone.
    #[test]
    fn a_suspended_child_joins_its_job_before_it_runs_and_the_table_reads_the_job_by_name() {
        use std::os::windows::process::CommandExt;
        let t = process_table::os();
        let name = format!("godot-mcp-test-gate-{}", std::process::id());
        let job = JobObject::create(Some(&name)).unwrap();
        let mut child = Command::new("cmd.exe")
            .args(["/d", "/c", "ping -n 60 127.0.0.1 >NUL"])
            .creation_flags(job::CREATE_SUSPENDED)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        job.assign_pid(pid).unwrap();
        assert_eq!(t.job_members(&name), JobState::Members(vec![pid as i32]));
        // Suspended: it has run nothing, so it has started no child.
        assert_eq!(job.members().unwrap(), [pid]);

        job::resume(pid).unwrap();
        until("ping joined the job", || job.members().unwrap().len() >= 2);
        let JobState::Members(members) = t.job_members(&name) else {
            panic!("the job is readable by name");
        };
        let created = t.stat(pid as i32).unwrap().start_time;
        for m in &members {
            assert!(
                t.stat(*m).unwrap().start_time >= created,
                "a child is not older than its parent"
            );
        }

        assert!(t.terminate_job(&name));
        child.wait().unwrap();
        until("the job is empty", || {
            t.job_members(&name) == JobState::Members(Vec::new())
        });
        drop(job);
        until("the job's name is gone", || {
            t.job_members(&name) == JobState::Gone
        });
        assert!(!t.terminate_job(&name), "no job, nothing terminated");
    }

    #[test]
    fn a_job_name_in_use_is_refused() {
        let name = format!("godot-mcp-test-taken-{}", std::process::id());
        let first = JobObject::create(Some(&name)).unwrap();
        let e = JobObject::create(Some(&name)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        drop(first);
        JobObject::create(Some(&name)).unwrap();
    }
}
