/* placeholder */
#include <stdio.h>
#include "commands.h"
int vt_cmd_run(int argc, char **argv) { (void)argc; (void)argv; return 1; }
