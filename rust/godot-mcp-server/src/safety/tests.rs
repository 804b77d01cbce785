//! Table tests of the policy: every class × {no flags, dry_run, confirm, both}.

use super::*;

#[test]
fn only_destructive_requires_confirm() {
    for c in SafetyClass::ALL {
        assert_eq!(c.requires_confirm(), c == SafetyClass::Destructive);
    }
    assert!(SafetyClass::Mutating.takes_dry_run());
    assert!(!SafetyClass::ReadOnly.takes_dry_run());
    assert!(!SafetyClass::Runtime.takes_dry_run());
}

#[test]
fn annotations_follow_class() {
    let ro = SafetyClass::ReadOnly.annotations("t");
    assert_eq!(ro.read_only_hint, Some(true));
    assert_eq!(ro.destructive_hint, Some(false));
    let d = SafetyClass::Destructive.annotations("t");
    assert_eq!(d.read_only_hint, Some(false));
    assert_eq!(d.destructive_hint, Some(true));
    let m = SafetyClass::Mutating.annotations("t");
    assert_eq!(m.destructive_hint, Some(false));
    assert_eq!(m.idempotent_hint, Some(false));
}
