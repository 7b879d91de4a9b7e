/* placeholder: replaced by the report module */
#include <stdio.h>
#include "commands.h"
int vt_cmd_report(int argc, char **argv) { (void)argc; (void)argv; fputs("vramtrace report: not built yet\n", stderr); return 1; }
