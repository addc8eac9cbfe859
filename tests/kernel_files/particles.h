#ifndef PARTICLES_H
#define PARTICLES_H

#define SCALE 2
#define MAX_PARTICLES (1 << 10)
#define FLAG_ACTIVE 0x4u

typedef struct {
    float4 pos;   /* 16-byte aligned in OpenCL */
    float4 vel;
    float mass;
    int id;
} Particle;

#endif
