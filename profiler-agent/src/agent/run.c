/* Placeholder until the live agent lands: owned by the agent work (issue 4). */
#include <stdio.h>
#include "../cli/commands.h"
int cmd_run(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "hitcurve-agent: 'run' is not available in this build\n");
    return 2;
}
