// A river reach with a 90-degree bend and an island, meshed with triangles:
//   gmsh -2 river-bend.geo -o river-bend.msh
// Physical line groups name the boundary segments the case file refers to.
lc = 3.0;
Point(1) = {0, 0, 0, lc};
Point(2) = {100, 0, 0, lc};
Point(3) = {200, 100, 0, lc};
Point(4) = {200, 200, 0, lc};
Point(5) = {160, 200, 0, lc};
Point(6) = {160, 100, 0, lc};
Point(7) = {100, 40, 0, lc};
Point(8) = {0, 40, 0, lc};
Point(9) = {100, 100, 0, lc};  // centre of the bend
Line(1) = {1, 2};
Circle(2) = {2, 9, 3};
Line(3) = {3, 4};
Line(4) = {4, 5};
Line(5) = {5, 6};
Circle(6) = {6, 9, 7};
Line(7) = {7, 8};
Line(8) = {8, 1};
// The island: a circle of radius 6 m in the middle of the bend.
cx = 156.5685; cy = 43.4315; r = 6;
Point(10) = {cx, cy, 0, lc / 2};
Point(11) = {cx + r, cy, 0, lc / 2};
Point(12) = {cx, cy + r, 0, lc / 2};
Point(13) = {cx - r, cy, 0, lc / 2};
Point(14) = {cx, cy - r, 0, lc / 2};
Circle(9) = {11, 10, 12};
Circle(10) = {12, 10, 13};
Circle(11) = {13, 10, 14};
Circle(12) = {14, 10, 11};
Curve Loop(1) = {1, 2, 3, 4, 5, 6, 7, 8};
Curve Loop(2) = {9, 10, 11, 12};
Plane Surface(1) = {1, 2};
Physical Curve("inlet") = {8};
Physical Curve("outlet") = {4};
Physical Curve("banks") = {1, 2, 3, 5, 6, 7};
Physical Curve("island") = {9, 10, 11, 12};
Physical Surface("water") = {1};
Mesh.MshFileVersion = 4.1;
