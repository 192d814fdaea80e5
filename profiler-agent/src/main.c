/* hitcurve-agent: entry point; dispatches subcommands (one file each, see cli/commands.h). */
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/version.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hitcurve-agent <command> [options]\n"
        "commands:\n"
        "  replay   profile a captured trace offline and print its hit-rate curve (JSON)\n"
        "  run      live agent beside a memcached\n"
        "options: --help, --version; `hitcurve-agent <command> --help` for a command's options\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        printf("hitcurve-agent %s\n", HC_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "replay")) return cmd_replay(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "hitcurve-agent: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
