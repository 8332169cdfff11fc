/**
 * Tables and columns of migration 0018_registration (dynamic client
 * registration, resource indicators, token exchange), merged into the
 * database types of src/store/schema.ts by module augmentation.
 */
declare module '../schema.js' {
  interface ClientsTable {
    resources: string | null; // space-separated URIs
  }

  interface AuthorizationCodesTable {
    resources: string | null;
  }

  interface RefreshTokensTable {
    resources: string | null;
  }

  interface AccessTokensTable {
    audience: string | null;
    act: string | null; // JSON
  }

  interface RegistrationTokensTable {
    token_hash: string;
    uses: number;
    created_at: number;
    expires_at: number;
  }

  interface ClientRegistrationsTable {
    client_id: string;
    token_hash: string;
    metadata: string; // JSON
    created_at: number;
  }

  interface DB {
    registration_tokens: RegistrationTokensTable;
    client_registrations: ClientRegistrationsTable;
  }
}

export {};
