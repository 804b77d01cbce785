"""2D tasks: Godot's "Your first 2D game" (Dodge the Creeps; the finished game is
tests/fixtures/corpus/demo-4.4/2d/dodge_the_creeps)."""

TUTORIAL = "https://docs.godotengine.org/en/4.4/getting_started/first_2d_game/"

DISPLAY = """[display]

window/size/viewport_width=480
window/size/viewport_height=720
window/stretch/mode="canvas_items"
"""


def key(physical: int) -> str:
    return (
        'Object(InputEventKey,"resource_local_to_scene":false,"resource_name":"","device":-1,'
        '"window_id":0,"alt_pressed":false,"shift_pressed":false,"ctrl_pressed":false,'
        '"meta_pressed":false,"pressed":false,"keycode":0,"physical_keycode":%d,"key_label":0,'
        '"unicode":0,"location":0,"echo":false,"script":null)' % physical
    )


def action(name: str, *keys: int) -> str:
    events = "\n, ".join(key(k) for k in keys)
    return '%s={\n"deadzone": 0.2,\n"events": [%s\n]\n}\n' % (name, events)


KEY_A, KEY_D, KEY_W, KEY_S = 65, 68, 87, 83
KEY_LEFT, KEY_UP, KEY_RIGHT, KEY_DOWN, KEY_ENTER = 4194319, 4194320, 4194321, 4194322, 4194309

INPUT = "[input]\n\n" + "".join(
    [
        action("move_left", KEY_A, KEY_LEFT),
        action("move_right", KEY_D, KEY_RIGHT),
        action("move_up", KEY_W, KEY_UP),
        action("move_down", KEY_S, KEY_DOWN),
    ]
)

PLAYER_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="108" height="134" viewBox="0 0 108 134">
<ellipse cx="54" cy="67" rx="50" ry="63" fill="#d9e4f2" stroke="#3c4a5c" stroke-width="6"/>
<circle cx="38" cy="52" r="9" fill="#3c4a5c"/><circle cx="70" cy="52" r="9" fill="#3c4a5c"/>
</svg>
"""

MAIN_SCENE = """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://main.gd" id="1_main"]

[node name="Main" type="Node"]
script = ExtResource("1_main")
"""

MAIN_GD = """extends Node

@export var mob_scene: PackedScene
var score = 0
"""

TASKS = [
    {
        "id": "dodge-player-scene",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "02.player_scene.html (Creating the player scene)",
        "project": DISPLAY,
        "instruction": """
Create the player scene for our Dodge the Creeps game: `res://player.tscn`, an Area2D root
named `Player` with a Sprite2D showing `res://art/player.svg` at half size (scale 0.5), and a
CollisionShape2D with a CapsuleShape2D (radius 27, height 68) so the player can be hit.
""",
        "start": {"art/player.svg": PLAYER_SVG},
        "solution": {
            "player.tscn": """[gd_scene load_steps=4 format=3]

[ext_resource type="Texture2D" path="res://art/player.svg" id="1_tex"]

[sub_resource type="CapsuleShape2D" id="CapsuleShape2D_1"]
radius = 27.0
height = 68.0

[node name="Player" type="Area2D"]

[node name="Sprite2D" type="Sprite2D" parent="."]
scale = Vector2(0.5, 0.5)
texture = ExtResource("1_tex")

[node name="CollisionShape2D" type="CollisionShape2D" parent="."]
shape = SubResource("CapsuleShape2D_1")
"""
        },
        "pass_why": "player.tscn: Area2D Player, Sprite2D with player.svg at 0.5, capsule 27x68",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
if not p is Area2D or p.name != "Player":
    return "the root is %s named %s, not an Area2D named Player" % [p.get_class(), p.name]
var sprite = find(p, "Sprite2D")
if sprite == null:
    return "no Sprite2D in the player"
if sprite.texture == null or sprite.texture.resource_path != "res://art/player.svg":
    return "the Sprite2D's texture is not res://art/player.svg (%s)" % [sprite.texture]
if not near(sprite.scale, Vector2(0.5, 0.5)):
    return "the Sprite2D's scale is %s, not (0.5, 0.5)" % [sprite.scale]
var shape = find(p, "CollisionShape2D")
if shape == null or not shape.shape is CapsuleShape2D:
    return "no CollisionShape2D with a CapsuleShape2D"
if not near(shape.shape.radius, 27.0) or not near(shape.shape.height, 68.0):
    return "the capsule is radius %s height %s, not 27 and 68" % [shape.shape.radius, shape.shape.height]
return ""
""",
    },
    {
        "id": "dodge-player-movement",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "03.coding_the_player.html (Coding the player)",
        "project": DISPLAY + "\n" + INPUT,
        "instruction": """
The player in `res://player.tscn` does not move yet. In `player.gd`'s `_process(delta)`, read
the move_left / move_right / move_up / move_down actions, move at `speed` pixels per second
(diagonals no faster than straight moves) and keep the player on screen: its position must
stay inside the viewport rectangle.
""",
        "start": {
            "player.gd": """extends Area2D

@export var speed = 400 # How fast the player will move (pixels/sec).


func _process(delta):
    pass
""",
            "player.tscn": """[gd_scene load_steps=3 format=3]

[ext_resource type="Script" path="res://player.gd" id="1_player"]

[sub_resource type="CircleShape2D" id="CircleShape2D_1"]
radius = 27.0

[node name="Player" type="Area2D"]
script = ExtResource("1_player")

[node name="CollisionShape2D" type="CollisionShape2D" parent="."]
shape = SubResource("CircleShape2D_1")
""",
        },
        "solution": {
            "player.gd": """extends Area2D

@export var speed = 400 # How fast the player will move (pixels/sec).


func _process(delta):
    var velocity = Vector2.ZERO
    if Input.is_action_pressed("move_right"):
        velocity.x += 1
    if Input.is_action_pressed("move_left"):
        velocity.x -= 1
    if Input.is_action_pressed("move_down"):
        velocity.y += 1
    if Input.is_action_pressed("move_up"):
        velocity.y -= 1
    if velocity.length() > 0:
        velocity = velocity.normalized() * speed
    position += velocity * delta
    position = position.clamp(Vector2.ZERO, get_viewport_rect().size)
"""
        },
        "pass_why": "the player moves at speed, diagonals normalized, clamped to the screen",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
p.set_process(false)
p.position = Vector2(240, 360)
Input.action_press("move_right")
p._process(0.1)
Input.action_release("move_right")
if not near(p.position, Vector2(280, 360), 0.5):
    return "after 0.1 s of move_right from (240, 360) the player is at %s, not (280, 360)" % [p.position]
p.position = Vector2(240, 360)
Input.action_press("move_up")
Input.action_press("move_left")
p._process(0.1)
Input.action_release("move_up")
Input.action_release("move_left")
var moved = p.position.distance_to(Vector2(240, 360))
if not near(moved, 40.0, 0.5) or p.position.x >= 240 or p.position.y >= 360:
    return "a diagonal move (up+left, 0.1 s) went %s px to %s, not 40 px up-left" % [moved, p.position]
p.position = Vector2(470, 700)
Input.action_press("move_right")
Input.action_press("move_down")
p._process(1.0)
Input.action_release("move_right")
Input.action_release("move_down")
var size = get_viewport().get_visible_rect().size
if p.position.x > size.x + 0.01 or p.position.y > size.y + 0.01:
    return "the player left the screen: %s outside %s" % [p.position, size]
if p.position.x < size.x - 1 or p.position.y < size.y - 1:
    return "the player stopped at %s, short of the screen's corner %s" % [p.position, size]
return ""
""",
    },
    {
        "id": "dodge-input-actions",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "03.coding_the_player.html (input actions)",
        "project": DISPLAY,
        "instruction": """
Set up the input map for our Dodge the Creeps game: actions `move_left`, `move_right`,
`move_up` and `move_down`, each on both the arrow key and the WASD key (A, D, W, S), and an
action `start_game` on Enter.
""",
        "solution": {
            "project.godot": "+" + INPUT + action("start_game", KEY_ENTER),
        },
        "pass_why": "the four move actions on arrows and WASD, start_game on Enter",
        "check": """
var want = {
    "move_left": [KEY_LEFT, KEY_A],
    "move_right": [KEY_RIGHT, KEY_D],
    "move_up": [KEY_UP, KEY_W],
    "move_down": [KEY_DOWN, KEY_S],
    "start_game": [KEY_ENTER],
}
for a in want:
    if not InputMap.has_action(a):
        return "no input action %s" % a
    var keys = []
    for e in InputMap.action_get_events(a):
        if e is InputEventKey:
            keys.append(e.physical_keycode if e.physical_keycode != KEY_NONE else e.keycode)
    for k in want[a]:
        if not k in keys:
            return "%s has no %s key (it has %s)" % [a, OS.get_keycode_string(k), keys.map(func(x): return OS.get_keycode_string(x))]
return ""
""",
    },
    {
        "id": "dodge-mob-scene",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "04.creating_the_enemy.html",
        "project": DISPLAY,
        "instruction": """
Make the enemy scene `res://mob.tscn`: a RigidBody2D root named `Mob` with the script
`res://mob.gd`, no gravity (gravity scale 0), a CollisionShape2D with a CapsuleShape2D, and a
VisibleOnScreenNotifier2D whose `screen_exited` signal is connected to the script's
`_on_visible_on_screen_notifier_2d_screen_exited` so a mob that leaves the screen is freed.
""",
        "start": {
            "mob.gd": """extends RigidBody2D


func _on_visible_on_screen_notifier_2d_screen_exited():
    queue_free()
""",
        },
        "solution": {
            "mob.tscn": """[gd_scene load_steps=3 format=3]

[ext_resource type="Script" path="res://mob.gd" id="1_mob"]

[sub_resource type="CapsuleShape2D" id="CapsuleShape2D_1"]
radius = 35.0
height = 100.0

[node name="Mob" type="RigidBody2D"]
collision_mask = 0
gravity_scale = 0.0
script = ExtResource("1_mob")

[node name="CollisionShape2D" type="CollisionShape2D" parent="."]
rotation = 1.5708
shape = SubResource("CapsuleShape2D_1")

[node name="VisibleOnScreenNotifier2D" type="VisibleOnScreenNotifier2D" parent="."]

[connection signal="screen_exited" from="VisibleOnScreenNotifier2D" to="." method="_on_visible_on_screen_notifier_2d_screen_exited"]
"""
        },
        "pass_why": "mob.tscn: RigidBody2D without gravity, capsule, screen_exited frees it",
        "check": """
var m = inst("res://mob.tscn")
if m == null:
    return "res://mob.tscn does not load as a scene"
if not m is RigidBody2D or m.name != "Mob":
    return "the root is %s named %s, not a RigidBody2D named Mob" % [m.get_class(), m.name]
if m.get_script() == null or m.get_script().resource_path != "res://mob.gd":
    return "the root's script is not res://mob.gd"
if not near(m.gravity_scale, 0.0):
    return "gravity_scale is %s, not 0" % m.gravity_scale
var shape = find(m, "CollisionShape2D")
if shape == null or not shape.shape is CapsuleShape2D:
    return "no CollisionShape2D with a CapsuleShape2D"
var notifier = find(m, "VisibleOnScreenNotifier2D")
if notifier == null:
    return "no VisibleOnScreenNotifier2D"
notifier.screen_exited.emit()
if not m.is_queued_for_deletion():
    return "screen_exited did not free the mob"
return ""
""",
    },
    {
        "id": "dodge-hud-start",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "06.heads_up_display.html",
        "project": DISPLAY,
        "instruction": """
Wire up the HUD (`res://hud.tscn`, script `hud.gd`): pressing StartButton must hide the button
and emit the HUD's `start_game` signal. Also add `update_score(score)`, which shows the score
in ScoreLabel.
""",
        "start": {
            "hud.gd": """extends CanvasLayer

# Notifies `Main` node that the button has been pressed
signal start_game


func show_message(text):
    $Message.text = text
    $Message.show()
""",
            "hud.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://hud.gd" id="1_hud"]

[node name="HUD" type="CanvasLayer"]
script = ExtResource("1_hud")

[node name="ScoreLabel" type="Label" parent="."]
offset_right = 480.0
offset_bottom = 78.0
text = "0"
horizontal_alignment = 1

[node name="Message" type="Label" parent="."]
offset_top = 240.0
offset_right = 480.0
offset_bottom = 320.0
text = "Dodge the Creeps!"
horizontal_alignment = 1

[node name="StartButton" type="Button" parent="."]
offset_left = 140.0
offset_top = 540.0
offset_right = 340.0
offset_bottom = 640.0
text = "Start"
""",
        },
        "solution": {
            "hud.gd": """extends CanvasLayer

# Notifies `Main` node that the button has been pressed
signal start_game


func show_message(text):
    $Message.text = text
    $Message.show()


func update_score(score):
    $ScoreLabel.text = str(score)


func _on_start_button_pressed():
    $StartButton.hide()
    start_game.emit()
""",
            "hud.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://hud.gd" id="1_hud"]

[node name="HUD" type="CanvasLayer"]
script = ExtResource("1_hud")

[node name="ScoreLabel" type="Label" parent="."]
offset_right = 480.0
offset_bottom = 78.0
text = "0"
horizontal_alignment = 1

[node name="Message" type="Label" parent="."]
offset_top = 240.0
offset_right = 480.0
offset_bottom = 320.0
text = "Dodge the Creeps!"
horizontal_alignment = 1

[node name="StartButton" type="Button" parent="."]
offset_left = 140.0
offset_top = 540.0
offset_right = 340.0
offset_bottom = 640.0
text = "Start"

[connection signal="pressed" from="StartButton" to="." method="_on_start_button_pressed"]
""",
        },
        "pass_why": "StartButton hides itself and emits start_game; update_score shows the score",
        "check": """
var hud = inst("res://hud.tscn")
if hud == null:
    return "res://hud.tscn does not load as a scene"
var button = hud.get_node_or_null("StartButton")
var label = hud.get_node_or_null("ScoreLabel")
if button == null or label == null:
    return "StartButton or ScoreLabel is missing"
var got = [0]
hud.start_game.connect(func(): got[0] += 1)
button.pressed.emit()
if got[0] != 1:
    return "pressing StartButton emitted start_game %d times, not once" % got[0]
if button.visible:
    return "StartButton is still visible after it was pressed"
if not hud.has_method("update_score"):
    return "the HUD has no update_score method"
hud.update_score(7)
if label.text != "7":
    return "update_score(7) left ScoreLabel at %s" % label.text
return ""
""",
    },
    {
        "id": "dodge-main-timers",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "05.the_main_game_scene.html",
        "project": DISPLAY,
        "instruction": """
Add the game's timers to `res://main.tscn`: three Timer children of Main named MobTimer
(0.5 s), ScoreTimer (1 s) and StartTimer (2 s, one shot), and a Marker2D named StartPosition
at (240, 450) where the player starts.
""",
        "start": {"main.gd": MAIN_GD, "main.tscn": MAIN_SCENE},
        "solution": {
            "main.tscn": MAIN_SCENE
            + """
[node name="MobTimer" type="Timer" parent="."]
wait_time = 0.5

[node name="ScoreTimer" type="Timer" parent="."]

[node name="StartTimer" type="Timer" parent="."]
wait_time = 2.0
one_shot = true

[node name="StartPosition" type="Marker2D" parent="."]
position = Vector2(240, 450)
"""
        },
        "pass_why": "MobTimer 0.5 s, ScoreTimer 1 s, StartTimer 2 s one shot, StartPosition (240, 450)",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var want = {"MobTimer": [0.5, false], "ScoreTimer": [1.0, false], "StartTimer": [2.0, true]}
for n in want:
    var t = main.get_node_or_null(n)
    if not t is Timer:
        return "Main has no Timer child named %s" % n
    if not near(t.wait_time, want[n][0]) or t.one_shot != want[n][1]:
        return "%s waits %s s (one_shot %s), not %s s (one_shot %s)" % [n, t.wait_time, t.one_shot, want[n][0], want[n][1]]
var start = main.get_node_or_null("StartPosition")
if not start is Marker2D:
    return "Main has no Marker2D named StartPosition"
if not near(start.position, Vector2(240, 450)):
    return "StartPosition is at %s, not (240, 450)" % [start.position]
return ""
""",
    },
    {
        "id": "dodge-mob-path",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "05.the_main_game_scene.html (Spawning mobs)",
        "project": DISPLAY,
        "instruction": """
Mobs spawn along the screen's edge. In `res://main.tscn` add a Path2D named MobPath whose
curve runs clockwise around the 480×720 screen through its four corners and closes back on
its first point, with a PathFollow2D child named MobSpawnLocation.
""",
        "start": {"main.gd": MAIN_GD, "main.tscn": MAIN_SCENE},
        "solution": {
            "main.tscn": """[gd_scene load_steps=3 format=3]

[ext_resource type="Script" path="res://main.gd" id="1_main"]

[sub_resource type="Curve2D" id="Curve2D_1"]
_data = {
"points": PackedVector2Array(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 480, 0, 0, 0, 0, 0, 480, 720, 0, 0, 0, 0, 0, 720, 0, 0, 0, 0, 0, 0)
}
point_count = 5

[node name="Main" type="Node"]
script = ExtResource("1_main")

[node name="MobPath" type="Path2D" parent="."]
curve = SubResource("Curve2D_1")

[node name="MobSpawnLocation" type="PathFollow2D" parent="MobPath"]
"""
        },
        "pass_why": "MobPath goes clockwise around the 480x720 screen, closed, with MobSpawnLocation",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var path = main.get_node_or_null("MobPath")
if not path is Path2D or path.curve == null:
    return "Main has no Path2D named MobPath with a curve"
var c: Curve2D = path.curve
if c.point_count < 5:
    return "the curve has %d points; four corners and the closing point make five" % c.point_count
var pts = []
for i in c.point_count:
    pts.append(c.get_point_position(i))
for corner in [Vector2(0, 0), Vector2(480, 0), Vector2(480, 720), Vector2(0, 720)]:
    if not pts.any(func(p): return p.distance_to(corner) < 2.0):
        return "no curve point at the corner %s (points: %s)" % [corner, pts]
if pts[0].distance_to(pts[-1]) > 2.0:
    return "the curve is not closed: it starts at %s and ends at %s" % [pts[0], pts[-1]]
var area = 0.0
for i in pts.size() - 1:
    area += pts[i].x * pts[i + 1].y - pts[i + 1].x * pts[i].y
if area <= 0:
    return "the curve runs counter-clockwise on screen"
var follow = path.get_node_or_null("MobSpawnLocation")
if not follow is PathFollow2D:
    return "MobPath has no PathFollow2D child named MobSpawnLocation"
return ""
""",
    },
    {
        "id": "dodge-window-settings",
        "name": "Dodge the Creeps",
        "source": TUTORIAL + "01.project_setup.html",
        "instruction": """
Set the project up for a portrait phone game: a 480×720 viewport (width and height), the
stretch mode `canvas_items`, and `res://main.tscn` as the main scene.
""",
        "start": {"main.gd": MAIN_GD, "main.tscn": MAIN_SCENE},
        "solution": {
            "project.godot": '+run/main_scene="res://main.tscn"\n\n' + DISPLAY,
        },
        "pass_why": "viewport 480x720, stretch canvas_items, main scene res://main.tscn",
        "check": """
var w = ProjectSettings.get_setting("display/window/size/viewport_width")
var h = ProjectSettings.get_setting("display/window/size/viewport_height")
if w != 480 or h != 720:
    return "the viewport is %sx%s, not 480x720" % [w, h]
var mode = ProjectSettings.get_setting("display/window/stretch/mode")
if mode != "canvas_items":
    return "the stretch mode is %s, not canvas_items" % mode
var main = str(ProjectSettings.get_setting("application/run/main_scene", ""))
if main.begins_with("uid://"):
    main = ResourceUID.get_id_path(ResourceUID.text_to_id(main))
if main != "res://main.tscn":
    return "the main scene is %s, not res://main.tscn" % main
return ""
""",
    },
]
