#ifndef HC_VERSION_H
#define HC_VERSION_H
#define HC_VERSION "0.1.0"
#endif
