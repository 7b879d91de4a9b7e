/* placeholder: replaced by the bandwidth module */
#include <stdio.h>
#include "commands.h"
int vt_cmd_bandwidth(int argc, char **argv) { (void)argc; (void)argv; fputs("vramtrace bandwidth: not built yet\n", stderr); return 1; }
