// Helpers and types only: nothing here can be launched.
typedef struct { float x; float y; } Point;

float dot2(Point a, Point b) { return a.x * b.x + a.y * b.y; }
