/* jsonc_floor.c - the floor for `vramtrace report` throughput in `make bench`: read a trace line by
 * line and json_tokener_parse each line, freeing the object; nothing else.
 * Usage: jsonc_floor TRACE  -> prints "lines bytes seconds" (parse loop only, CLOCK_MONOTONIC). */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: jsonc_floor TRACE\n"); return 2; }
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long long lines = 0, bytes = 0, bad = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    while ((n = getline(&line, &cap, f)) > 0) {
        json_object *o = json_tokener_parse(line);
        if (!o) bad++;
        json_object_put(o);
        lines++;
        bytes += (unsigned long long)n;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    free(line);
    fclose(f);
    if (bad) fprintf(stderr, "jsonc_floor: %llu lines did not parse\n", bad);
    printf("%llu %llu %.3f\n", lines, bytes, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return bad ? 1 : 0;
}
