"""Animation and tile-map tasks: the docs' animation and 2D tile-map pages, Dodge the
Creeps' animated player, and the corpus' tile-map demos (2d/platformer,
2d/dynamic_tilemap_layers)."""

ANIM = "https://docs.godotengine.org/en/4.4/tutorials/animation/"
TILES = "https://docs.godotengine.org/en/4.4/tutorials/2d/"


def svg(color: str, w: int = 32, h: int = 32) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
        f'<rect width="{w}" height="{h}" fill="{color}"/></svg>\n'
    )


TILES_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="16">'
    '<rect width="16" height="16" fill="#6b8e23"/><rect x="16" width="16" height="16" fill="#8b5a2b"/></svg>\n'
)

SPRITE_NODE = """[sub_resource type="GradientTexture2D" id="GradientTexture2D_1"]
width = 32
height = 32
"""

COIN = (
    "[gd_scene load_steps=2 format=3]\n\n"
    + SPRITE_NODE
    + """
[node name="Coin" type="Node2D"]

[node name="Sprite" type="Sprite2D" parent="."]
texture = SubResource("GradientTexture2D_1")
"""
)

TILESET = """[ext_resource type="Texture2D" path="res://art/tiles.svg" id="1_tiles"]

[sub_resource type="TileSetAtlasSource" id="TileSetAtlasSource_1"]
texture = ExtResource("1_tiles")
0:0/0 = 0
1:0/0 = 0

[sub_resource type="TileSet" id="TileSet_1"]
sources/0 = SubResource("TileSetAtlasSource_1")
"""

LEVEL_EMPTY = """[gd_scene format=3]

[node name="Level" type="Node2D"]

[node name="Ground" type="TileMapLayer" parent="."]
"""


def level(tileset: str, cells: str = "") -> str:
    text = "[gd_scene load_steps=4 format=3]\n\n" + tileset + """
[node name="Level" type="Node2D"]

[node name="Ground" type="TileMapLayer" parent="."]
"""
    if cells:
        text += cells + "\n"
    return text + 'tile_set = SubResource("TileSet_1")\n'


def tile_map_data(cells) -> str:
    """TileMapLayer.tile_map_data (format 0): uint16 0, then int16 x, int16 y, uint16
    source, atlas x, atlas y, alternative per cell, little-endian."""
    import struct

    raw = struct.pack("<H", 0)
    for x, y, src, ax, ay in cells:
        raw += struct.pack("<hhHHHH", x, y, src, ax, ay, 0)
    return "tile_map_data = PackedByteArray(" + ", ".join(str(b) for b in raw) + ")"


TASKS = [
    {
        "id": "anim-bounce",
        "source": ANIM + "introduction.html",
        "instruction": """
Make the coin in `res://coin.tscn` bounce: add an AnimationPlayer with a looping animation
named `bounce`, 1 second long, that moves the Sprite's position.y from 0 up to -20 at 0.5 s and
back to 0 at 1 s, and have it start by itself when the scene loads (autoplay).
""",
        "start": {"coin.tscn": COIN},
        "solution": {
            "coin.tscn": "[gd_scene load_steps=5 format=3]\n\n"
            + SPRITE_NODE
            + """
[sub_resource type="Animation" id="Animation_bounce"]
resource_name = "bounce"
loop_mode = 1
tracks/0/type = "value"
tracks/0/imported = false
tracks/0/enabled = true
tracks/0/path = NodePath("Sprite:position:y")
tracks/0/interp = 1
tracks/0/loop_wrap = true
tracks/0/keys = {
"times": PackedFloat32Array(0, 0.5, 1),
"transitions": PackedFloat32Array(1, 1, 1),
"update": 0,
"values": [0.0, -20.0, 0.0]
}

[sub_resource type="AnimationLibrary" id="AnimationLibrary_1"]
_data = {
&"bounce": SubResource("Animation_bounce")
}

[node name="Coin" type="Node2D"]

[node name="Sprite" type="Sprite2D" parent="."]
texture = SubResource("GradientTexture2D_1")

[node name="AnimationPlayer" type="AnimationPlayer" parent="."]
libraries = {
&"": SubResource("AnimationLibrary_1")
}
autoplay = "bounce"
"""
        },
        "pass_why": "bounce: 1 s, looping, autoplayed; the sprite is at y -20 at 0.5 s and 0 at 1 s",
        "check": """
var coin = inst("res://coin.tscn")
if coin == null:
    return "res://coin.tscn does not load as a scene"
var ap = find(coin, "AnimationPlayer")
if ap == null or not ap.has_animation("bounce"):
    return "no AnimationPlayer with an animation named bounce"
var anim = ap.get_animation("bounce")
if not near(anim.length, 1.0):
    return "bounce lasts %s s, not 1" % anim.length
if anim.loop_mode == Animation.LOOP_NONE:
    return "bounce does not loop"
if ap.autoplay != "bounce" or ap.current_animation != "bounce":
    return "bounce does not play by itself (autoplay %s, playing %s)" % [ap.autoplay, ap.current_animation]
var sprite = coin.get_node_or_null("Sprite")
ap.seek(0.5, true)
if not near(sprite.position.y, -20.0, 0.5):
    return "at 0.5 s the Sprite is at y %s, not -20" % sprite.position.y
ap.seek(0.999, true)
if not near(sprite.position.y, 0.0, 0.5):
    return "at 1 s the Sprite is at y %s, not 0" % sprite.position.y
return ""
""",
    },
    {
        "id": "anim-method-track",
        "source": ANIM + "animation_track_types.html (Call Method track)",
        "instruction": """
The gun in `res://gun.tscn` should fire a three-shot burst: add an AnimationPlayer with an
animation named `burst`, 0.6 s long and not looping, whose method track calls the Gun's
`fire()` at 0, 0.2 and 0.4 s.
""",
        "start": {
            "gun.gd": """extends Node2D

var shots = 0


func fire():
    shots += 1
""",
            "gun.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://gun.gd" id="1_gun"]

[node name="Gun" type="Node2D"]
script = ExtResource("1_gun")
""",
        },
        "solution": {
            "gun.tscn": """[gd_scene load_steps=4 format=3]

[ext_resource type="Script" path="res://gun.gd" id="1_gun"]

[sub_resource type="Animation" id="Animation_burst"]
resource_name = "burst"
length = 0.6
tracks/0/type = "method"
tracks/0/imported = false
tracks/0/enabled = true
tracks/0/path = NodePath(".")
tracks/0/interp = 1
tracks/0/loop_wrap = true
tracks/0/keys = {
"times": PackedFloat32Array(0, 0.2, 0.4),
"transitions": PackedFloat32Array(1, 1, 1),
"values": [{
"args": [],
"method": &"fire"
}, {
"args": [],
"method": &"fire"
}, {
"args": [],
"method": &"fire"
}]
}

[sub_resource type="AnimationLibrary" id="AnimationLibrary_1"]
_data = {
&"burst": SubResource("Animation_burst")
}

[node name="Gun" type="Node2D"]
script = ExtResource("1_gun")

[node name="AnimationPlayer" type="AnimationPlayer" parent="."]
libraries = {
&"": SubResource("AnimationLibrary_1")
}
"""
        },
        "pass_why": "burst (0.6 s, no loop) calls fire() three times",
        "check": """
var gun = inst("res://gun.tscn")
if gun == null:
    return "res://gun.tscn does not load as a scene"
var ap = find(gun, "AnimationPlayer")
if ap == null or not ap.has_animation("burst"):
    return "no AnimationPlayer with an animation named burst"
var anim = ap.get_animation("burst")
if not near(anim.length, 0.6) or anim.loop_mode != Animation.LOOP_NONE:
    return "burst is %s s long with loop mode %s, not 0.6 s without a loop" % [anim.length, anim.loop_mode]
ap.callback_mode_process = AnimationMixer.ANIMATION_CALLBACK_MODE_PROCESS_MANUAL
gun.shots = 0
ap.play("burst")
for i in 16:
    ap.advance(0.05)
# Method tracks call deferred by default (callback_mode_method): at the frame's end.
await frames(1)
if gun.shots != 3:
    return "playing burst to its end fired %d shots, not 3" % gun.shots
return ""
""",
    },
    {
        "id": "anim-sprite-frames",
        "source": "https://docs.godotengine.org/en/4.4/getting_started/first_2d_game/02.player_scene.html (AnimatedSprite2D)",
        "instruction": """
Animate the player in `res://player.tscn`: give its AnimatedSprite2D a SpriteFrames with two
animations, `walk` (frames `res://art/walk1.svg`, `res://art/walk2.svg`) and `up`
(`res://art/up1.svg`, `res://art/up2.svg`), both looping at 5 FPS, and make `walk` the
sprite's current animation.
""",
        "start": {
            "art/walk1.svg": svg("#4a90d9"),
            "art/walk2.svg": svg("#2f6fb3"),
            "art/up1.svg": svg("#d94a4a"),
            "art/up2.svg": svg("#b32f2f"),
            "player.tscn": """[gd_scene format=3]

[node name="Player" type="Area2D"]

[node name="AnimatedSprite2D" type="AnimatedSprite2D" parent="."]
""",
        },
        "solution": {
            "player.tscn": """[gd_scene load_steps=6 format=3]

[ext_resource type="Texture2D" path="res://art/walk1.svg" id="1_w1"]
[ext_resource type="Texture2D" path="res://art/walk2.svg" id="2_w2"]
[ext_resource type="Texture2D" path="res://art/up1.svg" id="3_u1"]
[ext_resource type="Texture2D" path="res://art/up2.svg" id="4_u2"]

[sub_resource type="SpriteFrames" id="SpriteFrames_1"]
animations = [{
"frames": [{
"duration": 1.0,
"texture": ExtResource("3_u1")
}, {
"duration": 1.0,
"texture": ExtResource("4_u2")
}],
"loop": true,
"name": &"up",
"speed": 5.0
}, {
"frames": [{
"duration": 1.0,
"texture": ExtResource("1_w1")
}, {
"duration": 1.0,
"texture": ExtResource("2_w2")
}],
"loop": true,
"name": &"walk",
"speed": 5.0
}]

[node name="Player" type="Area2D"]

[node name="AnimatedSprite2D" type="AnimatedSprite2D" parent="."]
sprite_frames = SubResource("SpriteFrames_1")
animation = &"walk"
"""
        },
        "pass_why": "SpriteFrames walk and up, two frames each, 5 FPS, looping; walk is current",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
var sprite = find(p, "AnimatedSprite2D")
if sprite == null or sprite.sprite_frames == null:
    return "no AnimatedSprite2D with SpriteFrames"
var sf: SpriteFrames = sprite.sprite_frames
var want = {"walk": ["res://art/walk1.svg", "res://art/walk2.svg"], "up": ["res://art/up1.svg", "res://art/up2.svg"]}
for a in want:
    if not sf.has_animation(a):
        return "the SpriteFrames have no animation %s" % a
    var got = []
    for i in sf.get_frame_count(a):
        var t = sf.get_frame_texture(a, i)
        got.append(t.resource_path if t != null else "null")
    if got != want[a]:
        return "%s shows %s, not %s" % [a, got, want[a]]
    if not near(sf.get_animation_speed(a), 5.0) or not sf.get_animation_loop(a):
        return "%s runs at %s FPS (loop %s), not 5 FPS looping" % [a, sf.get_animation_speed(a), sf.get_animation_loop(a)]
if sprite.animation != &"walk":
    return "the current animation is %s, not walk" % sprite.animation
return ""
""",
    },
    {
        "id": "anim-tween-fade",
        "source": "https://docs.godotengine.org/en/4.4/classes/class_tween.html (Tween)",
        "instruction": """
When the ghost in `res://ghost.tscn` vanishes it should fade out, not pop: make `vanish()` in
`ghost.gd` tween the Ghost's `modulate` alpha to 0 over 0.3 seconds with a Tween and free the
ghost when the fade is done.
""",
        "start": {
            "ghost.gd": """extends Node2D


func vanish():
    queue_free()
""",
            "ghost.tscn": "[gd_scene load_steps=3 format=3]\n\n"
            + '[ext_resource type="Script" path="res://ghost.gd" id="1_ghost"]\n\n'
            + SPRITE_NODE
            + """
[node name="Ghost" type="Node2D"]
script = ExtResource("1_ghost")

[node name="Sprite" type="Sprite2D" parent="."]
texture = SubResource("GradientTexture2D_1")
""",
        },
        "solution": {
            "ghost.gd": """extends Node2D


func vanish():
    var tween = create_tween()
    tween.tween_property(self, "modulate:a", 0.0, 0.3)
    tween.tween_callback(queue_free)
"""
        },
        "pass_why": "vanish() fades modulate alpha over about 0.3 s, then frees the ghost",
        "check": """
var g = inst("res://ghost.tscn")
if g == null:
    return "res://ghost.tscn does not load as a scene"
g.vanish()
if not is_instance_valid(g) or g.is_queued_for_deletion():
    return "vanish() freed the ghost at once, without a fade"
# The fade is stepped by hand (paused tweens, custom_step): no wall-clock timing.
var tweens = get_tree().get_processed_tweens()
if tweens.is_empty():
    return "vanish() started no Tween"
for t in tweens:
    t.pause()
for t in tweens:
    t.custom_step(0.15)
if not (g.modulate.a < 0.95 and g.modulate.a > 0.05):
    return "0.15 s into vanish() the ghost's alpha is %s: not fading over 0.3 s" % g.modulate.a
for t in tweens:
    t.custom_step(0.2)
await frames(2)
if is_instance_valid(g):
    return "0.35 s into vanish() the ghost still exists (alpha %s)" % g.modulate.a
return ""
""",
    },
    {
        "id": "tiles-atlas-source",
        "source": TILES + "using_tilesets.html",
        "instruction": """
Give the Ground TileMapLayer in `res://level.tscn` a TileSet with 16×16 tiles. Its atlas source
(id 0) uses the sheet `res://art/tiles.svg` and has both of the sheet's tiles created, at atlas
coordinates (0, 0) and (1, 0).
""",
        "start": {"art/tiles.svg": TILES_SVG, "level.tscn": LEVEL_EMPTY},
        "solution": {
            "level.tscn": level(
                TILESET.replace('texture = ExtResource("1_tiles")', 'texture = ExtResource("1_tiles")\ntexture_region_size = Vector2i(16, 16)').replace(
                    '[sub_resource type="TileSet" id="TileSet_1"]\n', '[sub_resource type="TileSet" id="TileSet_1"]\ntile_size = Vector2i(16, 16)\n'
                )
            )
        },
        "pass_why": "Ground's TileSet: 16x16 tiles, atlas 0 on tiles.svg with tiles (0,0) and (1,0)",
        "check": """
var lvl = inst("res://level.tscn")
if lvl == null:
    return "res://level.tscn does not load as a scene"
var ground = lvl.get_node_or_null("Ground")
if not ground is TileMapLayer or ground.tile_set == null:
    return "Ground is not a TileMapLayer with a TileSet"
var ts: TileSet = ground.tile_set
if ts.tile_size != Vector2i(16, 16):
    return "the TileSet's tile size is %s, not 16x16" % [ts.tile_size]
if not ts.has_source(0) or not ts.get_source(0) is TileSetAtlasSource:
    return "the TileSet has no atlas source with id 0"
var src: TileSetAtlasSource = ts.get_source(0)
if src.texture == null or src.texture.resource_path != "res://art/tiles.svg":
    return "the atlas's texture is not res://art/tiles.svg"
if src.texture_region_size != Vector2i(16, 16):
    return "the atlas cuts %s regions, not 16x16" % [src.texture_region_size]
for c in [Vector2i(0, 0), Vector2i(1, 0)]:
    if not src.has_tile(c):
        return "the atlas has no tile at %s" % [c]
return ""
""",
    },
    {
        "id": "tiles-paint-floor",
        "source": TILES + "using_tilemaps.html; corpus 2d/platformer",
        "instruction": """
Paint the first floor in `res://level.tscn`'s Ground layer: cells (0, 10) through (19, 10) get
the grass tile (source 0, atlas coordinates (0, 0)), and the two cells above its ends, (0, 9)
and (19, 9), get the wall tile (atlas (1, 0)).
""",
        "start": {"art/tiles.svg": TILES_SVG, "level.tscn": level(TILESET)},
        "solution": {
            "level.tscn": level(
                TILESET,
                tile_map_data(
                    [(x, 10, 0, 0, 0) for x in range(20)] + [(0, 9, 0, 1, 0), (19, 9, 0, 1, 0)]
                ),
            )
        },
        "pass_why": "row 10 from 0 to 19 is grass, walls at (0,9) and (19,9), nothing else",
        "check": """
var lvl = inst("res://level.tscn")
if lvl == null:
    return "res://level.tscn does not load as a scene"
var ground = lvl.get_node_or_null("Ground")
if not ground is TileMapLayer:
    return "no TileMapLayer named Ground"
for x in 20:
    var c = Vector2i(x, 10)
    if ground.get_cell_source_id(c) != 0 or ground.get_cell_atlas_coords(c) != Vector2i(0, 0):
        return "cell %s holds source %d atlas %s, not grass (0, (0, 0))" % [c, ground.get_cell_source_id(c), ground.get_cell_atlas_coords(c)]
for c in [Vector2i(0, 9), Vector2i(19, 9)]:
    if ground.get_cell_source_id(c) != 0 or ground.get_cell_atlas_coords(c) != Vector2i(1, 0):
        return "cell %s is not the wall tile (0, (1, 0))" % [c]
var used = ground.get_used_cells().size()
if used != 22:
    return "%d cells are painted, not 22" % used
return ""
""",
    },
    {
        "id": "tiles-collision",
        "source": TILES + "using_tilesets.html (Adding collision); corpus 2d/platformer",
        "instruction": """
The grass tile must be solid. In the TileSet of `res://level.tscn`'s Ground layer add a
physics layer (collision layer 1) and give the tile at atlas (0, 0) a collision polygon
covering the whole 16×16 tile. The wall tile (1, 0) stays without collision for now.
""",
        "start": {
            "art/tiles.svg": TILES_SVG,
            "level.tscn": level(TILESET, tile_map_data([(x, 10, 0, 0, 0) for x in range(20)])),
        },
        "solution": {
            "level.tscn": level(
                TILESET.replace(
                    "0:0/0 = 0\n", "0:0/0 = 0\n0:0/0/physics_layer_0/polygon_0/points = PackedVector2Array(-8, -8, 8, -8, 8, 8, -8, 8)\n"
                ).replace('[sub_resource type="TileSet" id="TileSet_1"]\n', '[sub_resource type="TileSet" id="TileSet_1"]\nphysics_layer_0/collision_layer = 1\n'),
                tile_map_data([(x, 10, 0, 0, 0) for x in range(20)]),
            )
        },
        "pass_why": "a physics layer on collision layer 1; tile (0,0) has a full-tile polygon; a body lands on the floor",
        "check": """
var lvl = inst("res://level.tscn")
if lvl == null:
    return "res://level.tscn does not load as a scene"
var ground = lvl.get_node_or_null("Ground")
if not ground is TileMapLayer or ground.tile_set == null:
    return "Ground is not a TileMapLayer with a TileSet"
var ts: TileSet = ground.tile_set
if ts.get_physics_layers_count() < 1:
    return "the TileSet has no physics layer"
if ts.get_physics_layer_collision_layer(0) & 1 == 0:
    return "physics layer 0 is not on collision layer 1"
var src = ts.get_source(0)
var data = src.get_tile_data(Vector2i(0, 0), 0)
if data.get_collision_polygons_count(0) < 1:
    return "tile (0, 0) has no collision polygon"
var pts = data.get_collision_polygon_points(0, 0)
var area = 0.0
for i in pts.size():
    var a = pts[i]
    var b = pts[(i + 1) % pts.size()]
    area += a.x * b.y - b.x * a.y
if absf(area / 2.0) < 250:
    return "tile (0, 0)'s polygon covers %s px^2, not the whole 16x16 tile" % absf(area / 2.0)
var wall = src.get_tile_data(Vector2i(1, 0), 0)
if wall.get_collision_polygons_count(0) > 0:
    return "the wall tile (1, 0) has a collision polygon too"
await physics_frames(3)
var space = ground.get_world_2d().direct_space_state
var at = ground.to_global(ground.map_to_local(Vector2i(5, 10)))
var hit = space.intersect_ray(PhysicsRayQueryParameters2D.create(at + Vector2(0, -100), at + Vector2(0, 100)))
if hit.is_empty() or not near(hit.position.y, at.y - 8, 1.0):
    return "a ray cast down onto cell (5, 10) does not hit its top (hit %s)" % [hit]
return ""
""",
    },
]
