// A 2 m x 1 m plate with a square hole, meshed into triangles and
// quadrilaterals (recombined), to check that shallows reads what Gmsh writes:
//   gmsh -2 plate.geo -format msh41 -o plate-41.msh
//   gmsh -0 plate-41.msh -format msh22 -o plate-22.msh   (and -bin for the binary copies)
lc = 0.25;
Point(1) = {0, 0, 0, lc};
Point(2) = {2, 0, 0, lc};
Point(3) = {2, 1, 0, lc};
Point(4) = {0, 1, 0, lc};
Point(5) = {0.8, 0.4, 0, lc};
Point(6) = {1.2, 0.4, 0, lc};
Point(7) = {1.2, 0.6, 0, lc};
Point(8) = {0.8, 0.6, 0, lc};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Line(5) = {5, 6};
Line(6) = {6, 7};
Line(7) = {7, 8};
Line(8) = {8, 5};
Curve Loop(1) = {1, 2, 3, 4};
Curve Loop(2) = {5, 6, 7, 8};
Plane Surface(1) = {1, 2};
Mesh.RecombinationAlgorithm = 0;  // "simple": leaves some triangles, so the mesh is mixed
Recombine Surface {1};
Physical Curve("left") = {4};
Physical Curve("right") = {2};
Physical Curve("walls") = {1, 3};
Physical Curve("pier") = {5, 6, 7, 8};
Physical Surface("plate") = {1};
