use proptest::prelude::*;

use super::*;

fn inside(host: Host, root: &str, path: &str) -> Containment {
    contains_str(host, root, path).unwrap_or_else(|e| panic!("{root} / {path}: {e}"))
}

fn rel(parts: &[&str]) -> Containment {
    Containment::Inside(parts.iter().map(|s| (*s).to_owned()).collect())
}

/// Asserts that `host` judges each (root, path) as given.
fn judged(host: Host, cases: &[(&str, &str, Containment)]) {
    for (root, path, want) in cases {
        assert_eq!(&inside(host, root, path), want, "{root} / {path}");
    }
}

#[test]
fn windows_drive_paths_are_normalised_before_they_are_judged() {
    // `..` is applied, `/` and `\` are one separator, the drive letter's case
    // and the names' ASCII case do not matter.
    judged(
        Host::WINDOWS,
        &[
            (r"C:\Proj", r"C:\Proj\..\PROJ\x.pck", rel(&["x.pck"])),
            (r"C:\Proj", r"c:/proj/a/./b", rel(&["a", "b"])),
            (r"C:\Proj", r"C:\Proj", rel(&[])),
            (r"C:\Proj", r"C:\Proj\..\x.pck", Containment::Outside),
            (r"C:\Proj", r"C:\Project\x", Containment::Outside),
            (r"C:\Proj", r"D:\Proj\x", Containment::Outside),
            // `..` at the root stays there.
            (r"C:\Proj", r"C:\..\..\Proj\x", rel(&["x"])),
        ],
    );
}

#[test]
fn windows_verbatim_and_unc_prefixes_name_the_same_roots() {
    judged(
        Host::WINDOWS,
        &[
            (r"C:\Proj", r"\\?\C:\proj\x", rel(&["x"])),
            (r"\\?\c:\Proj", r"C:\PROJ\x", rel(&["x"])),
            (
                r"\\Srv\Share\games\p",
                r"\\?\UNC\srv\SHARE\Games\P\a",
                rel(&["a"]),
            ),
            (
                r"\\srv\share\p",
                r"//srv/share/p/../../x",
                Containment::Outside,
            ),
            // `..` cannot climb above a share.
            (r"\\srv\share\p", r"\\srv\share\..\..\p\x", rel(&["x"])),
            (r"\\srv\share\p", r"\\srv\other\p\x", Containment::Outside),
            (r"\\srv\share\p", r"C:\p\x", Containment::Outside),
        ],
    );
}

#[test]
fn windows_refuses_what_it_would_rewrite_or_cannot_place() {
    let w = Host::WINDOWS;
    for (s, e) in [
        (r"Proj\x", PathError::NotAbsolute),
        (r"\Proj\x", PathError::NotAbsolute),
        (r"C:Proj\x", PathError::DriveRelative),
        (r"\\.\C:\Proj", PathError::DeviceNamespace),
        (r"//./pipe/x", PathError::DeviceNamespace),
        (r"\\?\GLOBALROOT\Device\x", PathError::DeviceNamespace),
        (r"\\?\Volume{0}\x", PathError::DeviceNamespace),
        (r"\\server", PathError::NotAbsolute),
        (r"\\?\C:\Proj\..\x", PathError::Component("..".into())),
        (r"\\?\C:\Proj\.\x", PathError::Component(".".into())),
        (r"C:\Proj.\x", PathError::Component("Proj.".into())),
        (r"C:\Proj \x", PathError::Component("Proj ".into())),
        (
            r"C:\Proj\x.pck:stream",
            PathError::Component("x.pck:stream".into()),
        ),
        (r"C:\Proj\NUL", PathError::Component("NUL".into())),
        (r"C:\Proj\con.txt", PathError::Component("con.txt".into())),
        ("C:\\Proj\\a\0b", PathError::Nul),
    ] {
        assert_eq!(parse_absolute(w, s), Err(e), "{s}");
    }
    // Three dots are a name, not a parent; `console` is not `con`.
    assert!(parse_absolute(w, r"C:\Proj\...x\console.txt").is_ok());
}

#[test]
fn posix_keeps_backslashes_and_case() {
    let l = Host::LINUX;
    judged(
        l,
        &[
            ("/p", r"/p/a\..\..\x", rel(&[r"a\..\..\x"])),
            ("/home/u/Game", "/home/u/game/x", Containment::Outside),
            ("/home/u/game", "/home/u/x/../game/y", rel(&["y"])),
        ],
    );
    assert_eq!(parse_absolute(l, r"C:\x"), Err(PathError::NotAbsolute));
    assert_eq!(parse_absolute(l, "game/x"), Err(PathError::NotAbsolute));
    // Windows device names are ordinary names here.
    assert!(parse_absolute(l, "/p/NUL").is_ok());
}

#[test]
fn macos_folds_ascii_case_and_refuses_to_guess_beyond_it() {
    // Precomposed and decomposed é, Ä and ä: the same file on APFS, maybe not
    // elsewhere. Neither inside nor outside is proven.
    let (cafe, cafe_decomposed) = ("/Users/u/Caf\u{e9}", "/Users/u/Cafe\u{301}/x");
    let (upper_a, lower_a) = ("/Users/u/\u{c4}", "/Users/u/\u{e4}/x");
    judged(
        Host::MACOS,
        &[
            ("/Users/u/Game", "/users/U/game/x", rel(&["x"])),
            ("/Users/u/Game", "/Users/u/Games/x", Containment::Outside),
            (cafe, cafe_decomposed, Containment::Ambiguous),
            (upper_a, lower_a, Containment::Ambiguous),
            // A definite difference stays definite.
            (upper_a, "/Users/u/\u{f6}/x", Containment::Outside),
        ],
    );
    judged(Host::LINUX, &[(upper_a, lower_a, Containment::Outside)]);
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_]{1,6}"
}

fn host() -> impl Strategy<Value = Host> {
    prop_oneof![Just(Host::LINUX), Just(Host::MACOS), Just(Host::WINDOWS)]
}

/// A root spelt for `host`, as its components.
fn spell(host: Host, parts: &[String], upper: bool, backslash: bool) -> String {
    let parts: Vec<String> = parts
        .iter()
        .map(|p| {
            if upper && host.case_insensitive {
                p.to_uppercase()
            } else {
                p.clone()
            }
        })
        .collect();
    match host.style {
        Style::Posix => format!("/{}", parts.join("/")),
        Style::Windows => {
            let sep = if backslash { "\\" } else { "/" };
            format!("C:{sep}{}", parts.join(sep))
        }
    }
}

proptest! {
    /// Descending into a name, then `..`, then into the root's own last name
    /// again, lands in the root whatever the host's spelling.
    #[test]
    fn a_detour_through_a_sibling_comes_back_inside(
        host in host(),
        root in proptest::collection::vec(name(), 1..4),
        detour in name(),
        tail in proptest::collection::vec(name(), 0..3),
        upper in any::<bool>(),
        backslash in any::<bool>(),
    ) {
        let r = spell(host, &root, false, true);
        let mut via = root.clone();
        via.pop();
        via.push(detour);
        via.push("..".into());
        via.push(root.last().unwrap().clone());
        via.extend(tail.iter().cloned());
        let p = spell(host, &via, upper, backslash);
        let got = contains_str(host, &r, &p).unwrap();
        match got {
            Containment::Inside(rest) => {
                let want: Vec<String> = tail
                    .iter()
                    .map(|t| if upper && host.case_insensitive { t.to_uppercase() } else { t.clone() })
                    .collect();
                prop_assert_eq!(rest, want);
            }
            other => prop_assert!(false, "{r} / {p}: {other:?}"),
        }
    }

    /// Climbing one level above the root and into anything that is not the
    /// root's name (in the host's folding) is outside.
    #[test]
    fn climbing_out_is_outside(
        host in host(),
        root in proptest::collection::vec(name(), 1..4),
        other in name(),
        tail in proptest::collection::vec(name(), 0..3),
    ) {
        let last = root.last().unwrap().clone();
        let same = if host.case_insensitive {
            other.eq_ignore_ascii_case(&last)
        } else {
            other == last
        };
        prop_assume!(!same);
        let r = spell(host, &root, false, true);
        let mut via = root.clone();
        via.push("..".into());
        via.push("..".into());
        via.push(other);
        via.extend(tail);
        let p = spell(host, &via, false, false);
        prop_assert_eq!(contains_str(host, &r, &p).unwrap(), Containment::Outside);
    }

    /// Parsing never panics, whatever the input and host.
    #[test]
    fn parsing_any_string_answers(host in host(), s in "[\\\\/a-zA-Z:.?UNC \u{e9}]{0,24}") {
        let _ = parse_absolute(host, &s);
    }
}
