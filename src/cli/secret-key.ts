import { generateSecretKey, parseSecretKey } from '../core/secret-box.js';
import { rotateSecretKey } from '../store/secrets/rotate.js';
import type { CliHelpers } from './event-webhooks.js';
import { parserOptions } from './commands.js';

export function secretKeyCommands(h: Pick<CliHelpers, 'parse' | 'configFrom' | 'print'>, readStdin: () => Promise<string>): Record<string, (args: string[]) => Promise<void>> {
  return {
    'secret-key rotate': async (args) => {
      const { values } = h.parse(args, parserOptions('secret-key rotate'));
      const config = h.configFrom(values);
      const given = values['new-key-stdin'] === true;
      const key = given ? parseSecretKey(await readStdin(), 'the new key on stdin') : generateSecretKey();
      const r = await rotateSecretKey(config.databaseUrl, config.secretKey, key);
      // Only a key this command made up, for the environment variable, is printed: a key file already holds it.
      const show = !r.keyFile && !given;
      const out = { key_id: r.keyId, previous_key_id: r.previousKeyId, reencrypted: r.reencrypted,
        ...(r.keyFile ? { key_file: r.keyFile } : {}), ...(show ? { secret_key: key.toString('base64') } : {}) };
      const next = r.keyFile ? `${r.keyFile} now holds it` : show ? `set GATEHOUSE_SECRET_KEY=${key.toString('base64')} for every process` : 'set GATEHOUSE_SECRET_KEY to it for every process';
      h.print(Boolean(values.json), out, `re-encrypted ${r.reencrypted} secret(s) under key ${r.keyId} (was ${r.previousKeyId}); ${next}, then start the processes again`);
    },
  };
}
