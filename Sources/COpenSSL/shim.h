// Thin C shim for OpenSSL: includes the real headers plus prefixed inline helpers.
#ifndef COpenSSL_SHIM_H
#define COpenSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/ocsp.h>
#include <openssl/cms.h>

// MARK: AppStoreVerification helpers (CIAP_ prefix). Macros and stack
// functions get plain wrappers so Swift sees stable, non-variadic symbols.

/// Frees memory allocated by OpenSSL (OPENSSL_free is a macro).
static inline void CIAP_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

/// A new, empty STACK_OF(X509); the caller frees it with CIAP_sk_X509_free.
static inline STACK_OF(X509) *CIAP_sk_X509_new_null(void) { return sk_X509_new_null(); }
/// Pushes without taking a reference: the stack does not own `certificate`.
static inline int CIAP_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
/// Frees the stack only, not the certificates it points to.
static inline void CIAP_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
static inline int CIAP_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *CIAP_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
/// Frees the stack and drops one reference to each certificate in it
/// (for stacks that own their certificates, as CMS_get1_certs returns).
static inline void CIAP_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

/// The number of SignerInfos of a CMS SignedData (borrowed stack).
static inline int CIAP_CMS_signer_infos_count(CMS_ContentInfo *cms) {
    STACK_OF(CMS_SignerInfo) *infos = CMS_get0_SignerInfos(cms);
    return infos == NULL ? 0 : sk_CMS_SignerInfo_num(infos);
}

/// The NID of the first SignerInfo's digest algorithm (NID_undef when
/// there is none). Everything it reads is borrowed from `cms`.
static inline int CIAP_CMS_first_signer_digest_nid(CMS_ContentInfo *cms) {
    STACK_OF(CMS_SignerInfo) *infos = CMS_get0_SignerInfos(cms);
    if (infos == NULL || sk_CMS_SignerInfo_num(infos) < 1) return NID_undef;
    X509_ALGOR *digest = NULL;
    CMS_SignerInfo_get0_algs(sk_CMS_SignerInfo_value(infos, 0), NULL, NULL, &digest, NULL);
    if (digest == NULL) return NID_undef;
    const ASN1_OBJECT *algorithm = NULL;
    X509_ALGOR_get0(&algorithm, NULL, NULL, digest);
    return algorithm == NULL ? NID_undef : OBJ_obj2nid(algorithm);
}

/// OCSP URLs of a certificate's AIA extension; free with CIAP_X509_ocsp_list_free.
static inline int CIAP_ocsp_list_num(const STACK_OF(OPENSSL_STRING) *list) { return sk_OPENSSL_STRING_num(list); }
static inline const char *CIAP_ocsp_list_value(const STACK_OF(OPENSSL_STRING) *list, int index) { return sk_OPENSSL_STRING_value(list, index); }
static inline void CIAP_X509_ocsp_list_free(STACK_OF(OPENSSL_STRING) *list) { X509_email_free(list); }

/// Generates an EC key on a named curve ("P-256", "P-384"); EVP_EC_gen is a variadic macro.
static inline EVP_PKEY *CIAP_EC_generate(const char *curveName) { return EVP_EC_gen(curveName); }

/// The name of an EC key's curve into `buffer` ("prime256v1"); 1 on success.
static inline int CIAP_EVP_PKEY_group_name(const EVP_PKEY *key, char *buffer, size_t bufferSize) {
    size_t length = 0;
    return EVP_PKEY_get_group_name(key, buffer, bufferSize, &length);
}
#endif
