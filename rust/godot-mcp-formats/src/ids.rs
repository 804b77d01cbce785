//! The two identifiers Godot 4 writes into text resources, encoded as the engine
//! encodes them: a resource uid (`uid://…`, `ResourceUID::id_to_text`) and the
//! scene-unique id that follows `N_` in an `[ext_resource]`/`[sub_resource]` id
//! (`Resource::generate_scene_unique_id`).
//!
//! Both use the engine's 34-symbol alphabet: `'a'..='y'` then `'0'..='8'`. The
//! engine derives it as `('z' - 'a') + ('9' - '0')`, one short of the letters and of
//! the digits, and keeps it for compatibility: a `z` or `9` never appears in a uid
//! Godot wrote, and `text_to_id` misreads one. Randomness comes from the caller, so
//! these stay pure.

/// Symbols before the digits (`a`..=`y`).
const LETTERS: u64 = (b'z' - b'a') as u64;
/// The base of both encodings.
const BASE: u64 = LETTERS + (b'9' - b'0') as u64;

fn symbol(c: u64) -> char {
    if c < LETTERS {
        (b'a' + c as u8) as char
    } else {
        (b'0' + (c - LETTERS) as u8) as char
    }
}

/// A resource uid as Godot writes it, from 64 random bits. `ResourceUID::create_id`
/// keeps the low 63 bits (ids are non-negative), and so does this.
pub fn uid_text(random: u64) -> String {
    let mut id = random & 0x7FFF_FFFF_FFFF_FFFF;
    let mut digits = Vec::new();
    loop {
        digits.push(symbol(id % BASE));
        id /= BASE;
        if id == 0 {
            break;
        }
    }
    digits.reverse();
    format!("uid://{}", digits.into_iter().collect::<String>())
}

/// The id a `uid://…` text names (`ResourceUID::text_to_id`), or `None` when the
/// text is not a uid Godot could have written.
pub fn uid_value(text: &str) -> Option<u64> {
    let body = text.strip_prefix("uid://")?;
    if body.is_empty() {
        return None;
    }
    let mut id: u64 = 0;
    for c in body.bytes() {
        let v = match c {
            b'a'..=b'y' => u64::from(c - b'a'),
            b'0'..=b'8' => u64::from(c - b'0') + LETTERS,
            _ => return None,
        };
        id = id.checked_mul(BASE)?.checked_add(v)?;
    }
    (id <= 0x7FFF_FFFF_FFFF_FFFF).then_some(id)
}

/// The five-symbol scene-unique id, from 32 random bits, least significant symbol
/// first as the engine writes it.
pub fn scene_unique_id(random: u32) -> String {
    let mut n = u64::from(random);
    (0..5)
        .map(|_| {
            let c = symbol(n % BASE);
            n /= BASE;
            c
        })
        .collect()
}

/// The id of the `index`th (1-based) `[ext_resource]` of a file the engine saves:
/// `"<index>_<scene unique id>"`.
pub fn ext_resource_id(index: usize, random: u32) -> String {
    format!("{index}_{}", scene_unique_id(random))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_of_the_demo_project_round_trip() {
        // Written by Godot 4.4 into godot_project/ (scene and resource headers).
        for text in ["uid://bq5s7t2a8kxw3", "uid://bs1t2a3t4s5xk"] {
            let id = uid_value(text).unwrap();
            assert_eq!(uid_text(id), text);
        }
    }

    #[test]
    fn the_alphabet_has_no_z_and_no_9() {
        assert_eq!(uid_text(0), "uid://a");
        assert_eq!(uid_text(24), "uid://y");
        assert_eq!(uid_text(25), "uid://0");
        assert_eq!(uid_text(33), "uid://8");
        assert_eq!(uid_text(34), "uid://ba");
        assert_eq!(uid_value("uid://z"), None);
        assert_eq!(uid_value("uid://9"), None);
        // The top bit is dropped, as create_id does.
        assert_eq!(uid_text(u64::MAX), uid_text(i64::MAX as u64));
    }

    #[test]
    fn scene_unique_ids_are_five_symbols_least_significant_first() {
        assert_eq!(scene_unique_id(0), "aaaaa");
        assert_eq!(scene_unique_id(1), "baaaa");
        assert_eq!(scene_unique_id(34), "abaaa");
        assert_eq!(ext_resource_id(2, 25), "2_0aaaa");
        assert!(
            scene_unique_id(u32::MAX)
                .chars()
                .all(|c| matches!(c, 'a'..='y' | '0'..='8'))
        );
    }
}
