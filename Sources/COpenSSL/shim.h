#ifndef HEARTH_COPENSSL_SHIM_H
#define HEARTH_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

/* libssl's macros as functions Swift can call (the mail sender's STARTTLS). */
static inline long hearth_ssl_ctx_min_tls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline long hearth_ssl_set_sni(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
#endif
