/* Clocks, in seconds as doubles: the one place the engine, the lab and the
 * front ends read the time from. */
#ifndef CLEANUP_CLOCK_H
#define CLEANUP_CLOCK_H

/* Seconds on the monotonic clock (for intervals and deadlines). */
double cleanup_clock_mono(void);

/* Seconds since the epoch on the wall clock (for what a server's
 * timestamps are compared with). */
double cleanup_clock_wall(void);

#endif
