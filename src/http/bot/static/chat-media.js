// Gatehouse Chat: photos and documents in messages. Their bytes come from
// GET /client/files/<file_id> with the person's bearer token, so they are
// fetched by script and shown from blob: URLs (an <img src> or a link could
// not send the token). Loaded before chat.js, which calls ghChatMedia.
'use strict';
window.ghChatMedia = (() => {
  const sizes = ['B', 'KB', 'MB'];
  const humanSize = (n) => {
    let i = 0;
    while (n >= 1024 && i < sizes.length - 1) { n /= 1024; i++; }
    return `${i ? n.toFixed(1) : n} ${sizes[i]}`;
  };

  /** The file's bytes as a blob: URL (revoked when the page no longer shows it). */
  async function fileUrl(fileId, token) {
    const res = await fetch(`/client/files/${encodeURIComponent(fileId)}`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`the file could not be fetched (HTTP ${res.status})`);
    return URL.createObjectURL(await res.blob());
  }

  function photo(sizesList, token, onError) {
    // Largest last (Bot API, Message.photo).
    const p = sizesList[sizesList.length - 1];
    const img = document.createElement('img');
    img.className = 'photo';
    img.alt = 'Photo';
    img.width = Math.min(p.width, 320);
    img.height = Math.round((img.width * p.height) / Math.max(p.width, 1));
    img.dataset.fileId = p.file_id;
    fileUrl(p.file_id, token).then((url) => { img.src = url; }, onError);
    return img;
  }

  function documentButton(doc, token, onError) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'document';
    b.dataset.fileId = doc.file_id;
    const name = doc.file_name || 'document';
    const label = document.createElement('strong');
    label.textContent = `⬇ ${name}`;
    const size = document.createElement('small');
    size.textContent = doc.file_size ? humanSize(doc.file_size) : '';
    b.append(label, size);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        const url = await fileUrl(doc.file_id, token);
        const a = document.createElement('a');
        a.href = url;
        a.download = name;
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      } catch (e) {
        onError(e);
      } finally {
        b.disabled = false;
      }
    });
    return b;
  }

  /** The media element of a message, or null for a text message. */
  function element(m, token, onError) {
    if (Array.isArray(m.photo) && m.photo.length) return photo(m.photo, token, onError);
    if (m.document && m.document.file_id) return documentButton(m.document, token, onError);
    return null;
  }

  return { element };
})();
