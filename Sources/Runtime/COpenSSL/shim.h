#ifndef WATCHSYNC_COPENSSL_SHIM_H
#define WATCHSYNC_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#endif
