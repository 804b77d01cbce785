//! Generators of large, realistic Godot files, for benchmarks and for tests
//! in this and other crates (no feature flag: they are cheap and pure).

use std::fmt::Write as _;

/// Generates the text of a valid `.tscn` scene with `nodes` nodes (at least
/// one, the root), written the way Godot 4.4 writes scenes: ext resources
/// (scripts, textures, an instanced scene), sub-resources (shapes), a tree
/// three levels deep, 3–5 properties per node, groups, instanced sub-scenes
/// and signal connections.
pub fn generate_scene_text(nodes: usize) -> String {
    let nodes = nodes.max(1);
    let mut out = String::with_capacity(nodes * 220 + 2048);
    let shapes = 16;
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "[gd_scene load_steps={} format=3 uid=\"uid://bgen{nodes}scene\"]\n",
        5 + shapes + 1
    );
    let ext = [
        ("Script", "res://scripts/main.gd", "1_m4in0"),
        ("Script", "res://scripts/enemy.gd", "2_en3my"),
        ("Texture2D", "res://icon.svg", "3_ic0n1"),
        ("PackedScene", "res://scenes/player.tscn", "4_pl4yr"),
        ("Resource", "res://resources/player_stats.tres", "5_st4ts"),
    ];
    for (i, (ty, path, id)) in ext.iter().enumerate() {
        let _ = writeln!(
            out,
            "[ext_resource type=\"{ty}\" uid=\"uid://cext{i}res\" path=\"{path}\" id=\"{id}\"]"
        );
    }
    out.push('\n');
    for s in 0..shapes {
        let _ = writeln!(
            out,
            "[sub_resource type=\"RectangleShape2D\" id=\"RectangleShape2D_s{s:04}\"]\nsize = Vector2({}, {})\n",
            16 + s,
            24 + s
        );
    }
    out.push_str("[node name=\"Main\" type=\"Node2D\"]\nscript = ExtResource(\"1_m4in0\")\nmetadata/_edit_lock_ = true\n\n");

    // Tree: root → Group_i (every 100 nodes) → Enemy_j → two children each.
    let mut written = 1;
    let mut group = 0;
    let mut connections = Vec::new();
    while written < nodes {
        let group_name = format!("Group{group}");
        let _ = writeln!(
            out,
            "[node name=\"{group_name}\" type=\"Node2D\" parent=\".\"]\nposition = Vector2({}, 0)\nz_index = {}\nvisible = true\n",
            group * 64,
            group % 5
        );
        written += 1;
        let mut member = 0;
        while written < nodes && member < 33 {
            let name = format!("Enemy{member}");
            let path = format!("{group_name}/{name}");
            if member % 10 == 9 {
                let _ = writeln!(
                    out,
                    "[node name=\"{name}\" parent=\"{group_name}\" instance=ExtResource(\"4_pl4yr\")]\nposition = Vector2({}, {})\nrotation = 0.785398\nscale = Vector2(0.5, 0.5)\n",
                    member * 32,
                    group * 16
                );
                written += 1;
                member += 1;
                continue;
            }
            let _ = writeln!(
                out,
                "[node name=\"{name}\" type=\"CharacterBody2D\" parent=\"{group_name}\" groups=[\"enemies\", \"wave_{}\"]]\nposition = Vector2({}.5, {})\ncollision_layer = 4\ncollision_mask = 3\nscript = ExtResource(\"2_en3my\")\nspeed = {}.0\n",
                group % 4,
                member * 32,
                group * 16,
                100 + member
            );
            written += 1;
            if written < nodes {
                let _ = writeln!(
                    out,
                    "[node name=\"CollisionShape2D\" type=\"CollisionShape2D\" parent=\"{path}\"]\nshape = SubResource(\"RectangleShape2D_s{:04}\")\ndisabled = false\ndebug_color = Color(0, 0.6, 0.7, 0.42)\n",
                    (group + member) % shapes
                );
                written += 1;
            }
            if written < nodes {
                let _ = writeln!(
                    out,
                    "[node name=\"Sprite2D\" type=\"Sprite2D\" parent=\"{path}\"]\nmodulate = Color(1, 0.3, 0.3, 1)\ntexture = ExtResource(\"3_ic0n1\")\nflip_h = {}\nregion_rect = Rect2(0, 0, 64, 64)\n",
                    member % 2 == 0
                );
                written += 1;
            }
            if member % 5 == 0 {
                connections.push(path);
            }
            member += 1;
        }
        group += 1;
    }
    for path in connections {
        let _ = writeln!(
            out,
            "[connection signal=\"tree_exited\" from=\"{path}\" to=\".\" method=\"_on_enemy_tree_exited\" binds=[\"{path}\"]]"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_scene_parses_with_exactly_the_requested_node_count() {
        for n in [1, 2, 3, 50, 101, 1000] {
            let text = generate_scene_text(n);
            let scene = crate::parse_scene(&text).unwrap_or_else(|e| panic!("n={n}: {e}"));
            assert_eq!(scene.nodes.len(), n, "n={n}");
        }
        let scene = crate::parse_scene(&generate_scene_text(1000)).unwrap();
        assert!(!scene.connections.is_empty());
        assert!(scene.nodes.iter().any(|n| n.instance.is_some()));
        assert!(
            scene
                .nodes
                .iter()
                .any(|n| n.groups.contains(&"enemies".to_owned()))
        );
    }
}
