"""Microsoft's Graph SDK for Python (msgraph-sdk, with its Kiota request adapter and retry handler) against the tenant's
users API, as a migration script uses it: an app-only token from msal's client credentials, users created with
identities, a password and a directory extension attribute, found with `identities/any(…)`, paged with
`@odata.nextLink`, changed, refused as Graph refuses, retried after a throttle, and deleted.

Usage: python graph_users_interop.py BASE_URL CA_FILE [EXTENSIONS_APP_ID] [--read EMAIL]
With --read: only reads that person back (one b2c users made) with their attributes.
Prints one JSON line; exit 0 on success.
"""
import asyncio
import json
import os
import sys
import time

import msal
import requests
from azure.core.credentials import AccessToken
from kiota_authentication_azure.azure_identity_authentication_provider import AzureIdentityAuthenticationProvider
from msgraph import GraphRequestAdapter, GraphServiceClient
from msgraph.generated.models.o_data_errors.o_data_error import ODataError
from msgraph.generated.models.object_identity import ObjectIdentity
from msgraph.generated.models.password_profile import PasswordProfile
from msgraph.generated.models.user import User
from msgraph.generated.users.users_request_builder import UsersRequestBuilder
from kiota_abstractions.base_request_configuration import RequestConfiguration
from urllib.parse import urlparse

from b2c_test_tenant import BASE, CA, TENANT, check

os.environ["SSL_CERT_FILE"] = CA  # httpx, under the Graph SDK

USER_ADMIN = ("2b7e6c8a-3d0f-4e9b-9a4c-8f1d7e6b3c5a", "UserAdmin-dev-secret-2026")
EXTENSIONS_APP = (sys.argv[3] if len(sys.argv) > 3 else "").replace("-", "")
FLAG = f"extension_{EXTENSIONS_APP}_toBeMigrated"


class TenantCredential:
    """An azure-core token credential: msal's client-credentials grant at the local tenant."""

    def __init__(self):
        self.app = msal.ConfidentialClientApplication(
            USER_ADMIN[0], client_credential=USER_ADMIN[1], oidc_authority=f"{BASE}/{TENANT}/v2.0", verify=CA)

    def get_token(self, *scopes, **kwargs):
        result = self.app.acquire_token_for_client(["https://graph.microsoft.com/.default"])
        check("access_token" in result, f"client credentials for Graph failed: {result}")
        return AccessToken(result["access_token"], int(time.time()) + int(result.get("expires_in", 3600)))

    async def close(self):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *args):
        pass


class AsyncTenantCredential(TenantCredential):
    async def get_token(self, *scopes, **kwargs):
        return TenantCredential.get_token(self, *scopes, **kwargs)


def local_user(email, name, migrate):
    user = User(
        account_enabled=True, display_name=name,
        identities=[ObjectIdentity(sign_in_type="emailAddress", issuer=TENANT, issuer_assigned_id=email)],
        password_profile=PasswordProfile(password="Temp-" + name + "-2026!", force_change_password_next_sign_in=False),
        password_policies="DisablePasswordExpiration")
    user.additional_data = {FLAG: migrate}
    return user


async def read_back(graph, email):
    """--read EMAIL: the person b2c made, with its attributes, as the SDK sees them."""
    query = UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(
        filter=f"identities/any(c:c/issuerAssignedId eq '{email}' and c/issuer eq '{TENANT}')",
        select=["id", "displayName", "city", "identities", FLAG.replace("toBeMigrated", "LoyaltyId")])
    found = await graph.users.get(RequestConfiguration(query_parameters=query))
    check(len(found.value) == 1, f"{email}: {found.value}")
    u = found.value[0]
    print(json.dumps({"displayName": u.display_name, "loyaltyId": u.additional_data.get(FLAG.replace("toBeMigrated", "LoyaltyId")),
                      "city": u.city, "signIn": u.identities[0].issuer_assigned_id}))


async def main():
    host = urlparse(BASE).hostname
    auth = AzureIdentityAuthenticationProvider(
        AsyncTenantCredential(), scopes=["https://graph.microsoft.com/.default"], allowed_hosts=[host])
    adapter = GraphRequestAdapter(auth)
    adapter.base_url = f"{BASE}/graph/v1.0"
    graph = GraphServiceClient(request_adapter=adapter)
    if "--read" in sys.argv:
        return await read_back(graph, sys.argv[sys.argv.index("--read") + 1])

    created = []
    for i in range(5):
        u = await graph.users.post(local_user(f"moved{i}@contoso.com", f"Moved{i}", i % 2 == 0))
        check(u.id and u.identities and u.identities[0].issuer_assigned_id == f"moved{i}@contoso.com", f"created {u}")
        created.append(u.id)

    # The filter a migration's sign-in lookup sends.
    query = UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(
        filter=f"identities/any(c:c/issuerAssignedId eq 'moved3@contoso.com' and c/issuer eq '{TENANT}')",
        select=["id", "displayName", "identities", FLAG])
    found = await graph.users.get(RequestConfiguration(query_parameters=query))
    check(len(found.value) == 1 and found.value[0].id == created[3], f"filter found {found.value}")
    check(found.value[0].additional_data.get(FLAG) is False, f"extension attribute {found.value[0].additional_data}")

    # Pages of two, followed through @odata.nextLink.
    query = UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(top=2, select=["id"])
    page = await graph.users.get(RequestConfiguration(query_parameters=query))
    ids, pages = [u.id for u in page.value], 1
    while page.odata_next_link:
        page = await graph.users.with_url(page.odata_next_link).get()
        ids += [u.id for u in page.value]
        pages += 1
    check(set(created) <= set(ids) and len(ids) == len(set(ids)), f"paged ids {ids}")

    # A second user with the same sign-in name: Graph's 400.
    duplicate = None
    try:
        await graph.users.post(local_user("moved0@contoso.com", "Again", False))
    except ODataError as e:
        duplicate = (e.response_status_code, e.error.code)
    check(duplicate == (400, "Request_BadRequest"), f"duplicate {duplicate}")

    # Changed, then read back; the flag cleared as a migration clears it.
    change = User(display_name="Moved Zero")
    change.additional_data = {FLAG: False}
    await graph.users.by_user_id(created[0]).patch(change)
    again = await graph.users.by_user_id(created[0]).get(
        RequestConfiguration(query_parameters=UsersRequestBuilder.UsersRequestBuilderGetQueryParameters(
            select=["displayName", FLAG])))
    check(again.display_name == "Moved Zero" and again.additional_data.get(FLAG) is False, f"patched {again}")

    # Throttled once: the SDK's retry handler waits Retry-After and tries again.
    fault = requests.post(f"{BASE}/_admin/faults", json={"endpoint": "graph", "kind": "status429", "count": 1}, verify=CA)
    check(fault.status_code in (200, 201), f"fault {fault.status_code} {fault.text}")
    started = time.monotonic()
    after = await graph.users.by_user_id(created[1]).get()
    waited = time.monotonic() - started
    check(after.id == created[1] and waited >= 1.5, f"throttled read {after.id} after {waited:.1f} s")

    for uid in created:
        await graph.users.by_user_id(uid).delete()
    missing = None
    try:
        await graph.users.by_user_id(created[0]).get()
    except ODataError as e:
        missing = (e.response_status_code, e.error.code)
    check(missing == (404, "Request_ResourceNotFound"), f"deleted user read {missing}")
    print(json.dumps({"created": len(created), "pages": pages, "listed": len(ids), "throttledWait": round(waited, 1)}))


asyncio.run(main())
