"""3D tasks: Godot's "Your first 3D game" (Squash the Creeps; the finished game is
tests/fixtures/corpus/demo-4.4/3d/squash_the_creeps)."""

TUTORIAL = "https://docs.godotengine.org/en/4.4/getting_started/first_3d_game/"

MAIN = """[gd_scene format=3]

[node name="Main" type="Node"]
"""

GROUND = """[sub_resource type="BoxShape3D" id="BoxShape3D_ground"]
size = Vector3(60, 2, 60)

[sub_resource type="BoxMesh" id="BoxMesh_ground"]
size = Vector3(60, 2, 60)
"""

GROUND_NODES = """
[node name="Ground" type="StaticBody3D" parent="."]
transform = Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, -1, 0)

[node name="CollisionShape3D" type="CollisionShape3D" parent="Ground"]
shape = SubResource("BoxShape3D_ground")

[node name="MeshInstance3D" type="MeshInstance3D" parent="Ground"]
mesh = SubResource("BoxMesh_ground")
"""

MAIN_WITH_GROUND = "[gd_scene load_steps=3 format=3]\n\n" + GROUND + "\n" + MAIN.split("\n", 2)[2] + GROUND_NODES

PLAYER_GD = """extends CharacterBody3D

# How fast the player moves in meters per second.
@export var speed = 14

var target_velocity = Vector3.ZERO


func _physics_process(delta):
    var direction = Vector3.ZERO
    if Input.is_action_pressed("move_right"):
        direction.x += 1
    if Input.is_action_pressed("move_left"):
        direction.x -= 1
    if direction != Vector3.ZERO:
        direction = direction.normalized()
    target_velocity.x = direction.x * speed
    target_velocity.z = direction.z * speed
    velocity = target_velocity
    move_and_slide()
"""

PLAYER_TSCN = """[gd_scene load_steps=3 format=3]

[ext_resource type="Script" path="res://player.gd" id="1_player"]

[sub_resource type="SphereShape3D" id="SphereShape3D_1"]
radius = 0.8

[node name="Player" type="CharacterBody3D"]
script = ExtResource("1_player")

[node name="Pivot" type="Node3D" parent="."]

[node name="CollisionShape3D" type="CollisionShape3D" parent="."]
shape = SubResource("SphereShape3D_1")
"""

MOB_TSCN = """[gd_scene load_steps=2 format=3]

[sub_resource type="BoxShape3D" id="BoxShape3D_1"]
size = Vector3(1.8, 1, 2)

[node name="Mob" type="CharacterBody3D"]

[node name="CollisionShape3D" type="CollisionShape3D" parent="."]
shape = SubResource("BoxShape3D_1")
"""

TASKS = [
    {
        "id": "squash-ground",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "01.game_setup.html (the ground)",
        "instruction": """
Add the ground to `res://main.tscn`: a StaticBody3D named Ground with a CollisionShape3D
holding a 60×2×60 BoxShape3D and a MeshInstance3D showing a BoxMesh of the same size. Move the
Ground down 1 m so its top face is at y = 0; things must be able to stand on it.
""",
        "start": {"main.tscn": MAIN},
        "solution": {"main.tscn": MAIN_WITH_GROUND},
        "pass_why": "a 60x2x60 solid ground whose top is at y = 0 (a ray hits it there)",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var ground = main.get_node_or_null("Ground")
if not ground is StaticBody3D:
    return "Main has no StaticBody3D named Ground"
var shape = find(ground, "CollisionShape3D")
if shape == null or not shape.shape is BoxShape3D or not near(shape.shape.size, Vector3(60, 2, 60)):
    return "Ground has no CollisionShape3D with a 60x2x60 BoxShape3D"
var mesh = find(ground, "MeshInstance3D")
if mesh == null or not mesh.mesh is BoxMesh or not near(mesh.mesh.size, Vector3(60, 2, 60)):
    return "Ground has no MeshInstance3D with a 60x2x60 BoxMesh"
await physics_frames(3)
var space = ground.get_world_3d().direct_space_state
for at in [Vector3(0, 10, 0), Vector3(25, 10, -25)]:
    var hit = space.intersect_ray(PhysicsRayQueryParameters3D.create(at, at + Vector3(0, -20, 0)))
    if hit.is_empty():
        return "a ray cast down at %s hits nothing" % [at]
    if not near(hit.position.y, 0.0, 0.05):
        return "a ray cast down at %s hits the ground at y = %s, not 0" % [at, hit.position.y]
return ""
""",
    },
    {
        "id": "squash-sun",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "01.game_setup.html (the directional light)",
        "instruction": """
The scene is dark. Add a DirectionalLight3D named Sun to `res://main.tscn` that casts shadows
and shines down on the ground from above at an angle (about 60° below the horizon), placed a
few meters up.
""",
        "start": {"main.tscn": MAIN_WITH_GROUND},
        "solution": {
            "main.tscn": MAIN_WITH_GROUND
            + """
[node name="Sun" type="DirectionalLight3D" parent="."]
transform = Transform3D(1, 0, 0, 0, 0.5, 0.866025, 0, -0.866025, 0.5, 0, 20, 0)
shadow_enabled = true
"""
        },
        "pass_why": "Sun: a shadow-casting DirectionalLight3D shining down",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var sun = main.get_node_or_null("Sun")
if not sun is DirectionalLight3D:
    return "Main has no DirectionalLight3D named Sun"
if not sun.shadow_enabled:
    return "the Sun casts no shadows"
var forward = -sun.global_transform.basis.z.normalized()
if forward.y > -0.5:
    return "the Sun shines along %s: not down at the ground" % [forward]
return ""
""",
    },
    {
        "id": "squash-player-body",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "02.player_input.html (the player scene)",
        "instruction": """
Create the player scene `res://player.tscn`: a CharacterBody3D named Player with a Node3D child
named Pivot (the model goes under it later) and a CollisionShape3D using a SphereShape3D of
radius 0.8.
""",
        "start": {"main.tscn": MAIN_WITH_GROUND},
        "solution": {
            "player.tscn": """[gd_scene load_steps=2 format=3]

[sub_resource type="SphereShape3D" id="SphereShape3D_1"]
radius = 0.8

[node name="Player" type="CharacterBody3D"]

[node name="Pivot" type="Node3D" parent="."]

[node name="CollisionShape3D" type="CollisionShape3D" parent="."]
shape = SubResource("SphereShape3D_1")
"""
        },
        "pass_why": "player.tscn: CharacterBody3D Player with Pivot and a 0.8 m sphere",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
if not p is CharacterBody3D or p.name != "Player":
    return "the root is %s named %s, not a CharacterBody3D named Player" % [p.get_class(), p.name]
if not p.get_node_or_null("Pivot") is Node3D:
    return "Player has no Node3D child named Pivot"
var shape = find(p, "CollisionShape3D")
if shape == null or not shape.shape is SphereShape3D:
    return "Player has no CollisionShape3D with a SphereShape3D"
if not near(shape.shape.radius, 0.8):
    return "the sphere's radius is %s, not 0.8" % shape.shape.radius
return ""
""",
    },
    {
        "id": "squash-camera",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "03.player_movement_code.html (the camera)",
        "instruction": """
Add the camera rig to `res://main.tscn`: a Marker3D named CameraPivot rotated -45° around X,
with a Camera3D child 19 m out along the pivot's local Z axis. Make the camera orthographic
with a size of 19 so the whole play area is seen from above.
""",
        "start": {"main.tscn": MAIN_WITH_GROUND},
        "solution": {
            "main.tscn": MAIN_WITH_GROUND
            + """
[node name="CameraPivot" type="Marker3D" parent="."]
transform = Transform3D(1, 0, 0, 0, 0.707107, 0.707107, 0, -0.707107, 0.707107, 0, 0, 0)

[node name="Camera3D" type="Camera3D" parent="CameraPivot"]
transform = Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 19)
projection = 1
size = 19.0
"""
        },
        "pass_why": "an orthographic camera, size 19, 19 m out on a pivot tilted -45 degrees",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var pivot = main.get_node_or_null("CameraPivot")
if not pivot is Marker3D:
    return "Main has no Marker3D named CameraPivot"
if not near(pivot.rotation_degrees.x, -45.0, 0.5):
    return "CameraPivot is rotated %s degrees around X, not -45" % pivot.rotation_degrees.x
var cam = find(pivot, "Camera3D")
if cam == null:
    return "CameraPivot has no Camera3D child"
if not near(cam.position, Vector3(0, 0, 19), 0.05):
    return "the camera is at %s in the pivot, not (0, 0, 19)" % [cam.position]
if cam.projection != Camera3D.PROJECTION_ORTHOGONAL or not near(cam.size, 19.0):
    return "the camera is not orthographic with size 19 (projection %s, size %s)" % [cam.projection, cam.size]
if cam.global_position.y < 10:
    return "the camera is at %s: not above the play area" % [cam.global_position]
return ""
""",
    },
    {
        "id": "squash-collision-layers",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "06.jump_and_squash.html (physics layers)",
        "instruction": """
Set up collision layers: name the first three 3D physics layers `player`, `enemies` and
`world`. The Player (`res://player.tscn`) is on the player layer only and collides with
enemies and world; the Mob (`res://mob.tscn`) is on the enemies layer only and its mask is
empty (mobs collide with nothing).
""",
        "start": {"player.gd": PLAYER_GD, "player.tscn": PLAYER_TSCN, "mob.tscn": MOB_TSCN},
        "solution": {
            "project.godot": """+[layer_names]

3d_physics/layer_1="player"
3d_physics/layer_2="enemies"
3d_physics/layer_3="world"
""",
            "player.tscn": PLAYER_TSCN.replace(
                'script = ExtResource("1_player")', 'collision_mask = 6\nscript = ExtResource("1_player")'
            ),
            "mob.tscn": MOB_TSCN.replace(
                '[node name="Mob" type="CharacterBody3D"]',
                '[node name="Mob" type="CharacterBody3D"]\ncollision_layer = 2\ncollision_mask = 0',
            ),
        },
        "pass_why": "layers named player/enemies/world; player 1 -> 2+3, mob 2 -> none",
        "check": """
var names = ["player", "enemies", "world"]
for i in 3:
    var n = ProjectSettings.get_setting("layer_names/3d_physics/layer_%d" % (i + 1), "")
    if n != names[i]:
        return "3D physics layer %d is named %s, not %s" % [i + 1, n, names[i]]
var p = inst("res://player.tscn")
var m = inst("res://mob.tscn")
if p == null or m == null:
    return "player.tscn or mob.tscn does not load"
if p.collision_layer != 1 or p.collision_mask != 6:
    return "the player has layer %d mask %d, not layer 1 (player) mask 6 (enemies, world)" % [p.collision_layer, p.collision_mask]
if m.collision_layer != 2 or m.collision_mask != 0:
    return "the mob has layer %d mask %d, not layer 2 (enemies) mask 0" % [m.collision_layer, m.collision_mask]
return ""
""",
    },
    {
        "id": "squash-mob-squash",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "06.jump_and_squash.html (squashing monsters)",
        "instruction": """
Give the mob (`res://mob.gd`, on `res://mob.tscn`) a `squashed` signal and a `squash()`
method that emits `squashed` and then frees the mob, so the score can count squashed mobs.
""",
        "start": {
            "mob.gd": """extends CharacterBody3D

# Minimum speed of the mob in meters per second.
@export var min_speed = 10
# Maximum speed of the mob in meters per second.
@export var max_speed = 18


func _on_visible_on_screen_notifier_3d_screen_exited():
    queue_free()
""",
            "mob.tscn": MOB_TSCN.replace("[gd_scene load_steps=2 format=3]\n", '[gd_scene load_steps=3 format=3]\n\n[ext_resource type="Script" path="res://mob.gd" id="1_mob"]\n').replace(
                '[node name="Mob" type="CharacterBody3D"]', '[node name="Mob" type="CharacterBody3D"]\nscript = ExtResource("1_mob")'
            ),
        },
        "solution": {
            "mob.gd": """extends CharacterBody3D

# Emitted when the player jumped on the mob.
signal squashed

# Minimum speed of the mob in meters per second.
@export var min_speed = 10
# Maximum speed of the mob in meters per second.
@export var max_speed = 18


func _on_visible_on_screen_notifier_3d_screen_exited():
    queue_free()


func squash():
    squashed.emit()
    queue_free()
""",
        },
        "pass_why": "squash() emits squashed once and frees the mob",
        "check": """
var m = inst("res://mob.tscn")
if m == null:
    return "res://mob.tscn does not load as a scene"
if not m.has_signal("squashed"):
    return "the mob has no squashed signal"
if not m.has_method("squash"):
    return "the mob has no squash() method"
var got = [0]
m.connect("squashed", func(): got[0] += 1)
m.squash()
if got[0] != 1:
    return "squash() emitted squashed %d times, not once" % got[0]
if not m.is_queued_for_deletion():
    return "squash() did not free the mob"
return ""
""",
    },
    {
        "id": "squash-player-gravity",
        "name": "Squash the Creeps",
        "source": TUTORIAL + "03.player_movement_code.html (gravity)",
        "instruction": """
The player in `res://player.tscn` floats in the air. In `player.gd`, add
`@export var fall_acceleration = 75` and make the player fall: every physics frame while it
is not on the floor, its vertical velocity decreases by fall_acceleration × delta before
`move_and_slide()`.
""",
        "start": {"player.gd": PLAYER_GD, "player.tscn": PLAYER_TSCN},
        "solution": {
            "player.gd": PLAYER_GD.replace(
                "@export var speed = 14\n",
                "@export var speed = 14\n# The downward acceleration when in the air, in meters per second squared.\n@export var fall_acceleration = 75\n",
            ).replace(
                "    target_velocity.z = direction.z * speed\n",
                "    target_velocity.z = direction.z * speed\n    if not is_on_floor():\n        target_velocity.y = target_velocity.y - (fall_acceleration * delta)\n",
            )
        },
        "pass_why": "fall_acceleration is 75 and the player falls faster every physics frame",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
if p.get("fall_acceleration") != 75:
    return "the player's fall_acceleration is %s, not 75" % [p.get("fall_acceleration")]
p.global_position = Vector3(0, 50, 0)
await physics_frames(2)
var v1 = p.velocity.y
await physics_frames(10)
var v2 = p.velocity.y
if p.global_position.y >= 50:
    return "after 12 physics frames in the air the player has not fallen (y = %s)" % p.global_position.y
var dt = 1.0 / Engine.physics_ticks_per_second
var want = -75.0 * dt * 10
if not near(v2 - v1, want, absf(want) * 0.25):
    return "the vertical velocity changed by %s over 10 frames, not about %s (75 m/s^2)" % [v2 - v1, want]
return ""
""",
    },
    {
        "id": "squash-mob-material",
        "name": "Squash the Creeps",
        "source": "tests/fixtures/corpus/demo-4.4/3d/squash_the_creeps (the mob's look); docs: tutorials/3d/standard_material_3d.html",
        "instruction": """
The mob in `res://mob.tscn` is an untextured grey box (its MeshInstance3D named Body). Give
the Body a StandardMaterial3D: albedo color #d9594c, roughness 0.4, and emission enabled in
the same color with an energy multiplier of 0.5 so it glows a little.
""",
        "start": {
            "mob.tscn": """[gd_scene load_steps=2 format=3]

[sub_resource type="BoxMesh" id="BoxMesh_1"]
size = Vector3(1.8, 1, 2)

[node name="Mob" type="CharacterBody3D"]

[node name="Body" type="MeshInstance3D" parent="."]
mesh = SubResource("BoxMesh_1")
"""
        },
        "solution": {
            "mob.tscn": """[gd_scene load_steps=3 format=3]

[sub_resource type="StandardMaterial3D" id="StandardMaterial3D_1"]
albedo_color = Color(0.85098, 0.34902, 0.298039, 1)
roughness = 0.4
emission_enabled = true
emission = Color(0.85098, 0.34902, 0.298039, 1)
emission_energy_multiplier = 0.5

[sub_resource type="BoxMesh" id="BoxMesh_1"]
material = SubResource("StandardMaterial3D_1")
size = Vector3(1.8, 1, 2)

[node name="Mob" type="CharacterBody3D"]

[node name="Body" type="MeshInstance3D" parent="."]
mesh = SubResource("BoxMesh_1")
"""
        },
        "pass_why": "Body renders with a #d9594c StandardMaterial3D, roughness 0.4, emission 0.5",
        "check": """
var m = inst("res://mob.tscn")
if m == null:
    return "res://mob.tscn does not load as a scene"
var body = m.get_node_or_null("Body")
if not body is MeshInstance3D:
    return "the mob has no MeshInstance3D named Body"
var mat = body.get_active_material(0)
if not mat is StandardMaterial3D:
    return "Body's surface has no StandardMaterial3D (it has %s)" % [mat]
var red = Color("#d9594c")
if not near(mat.albedo_color, red, 0.01):
    return "the albedo is %s, not #d9594c" % mat.albedo_color.to_html()
if not near(mat.roughness, 0.4):
    return "the roughness is %s, not 0.4" % mat.roughness
if not mat.emission_enabled or not near(mat.emission, red, 0.01) or not near(mat.emission_energy_multiplier, 0.5):
    return "emission is not on in #d9594c at energy 0.5 (on %s, %s, %s)" % [mat.emission_enabled, mat.emission.to_html(), mat.emission_energy_multiplier]
return ""
""",
    },
]
