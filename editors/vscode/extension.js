// The ZipperGen extension: starts `zgc lsp` (the setting zg.server.path
// names zgc) for .zg files, and two commands that show, beside the source,
// what the server's custom requests return: the local program of a
// lifeline (zgc/projection, as `zgc project` prints it) and the monitor
// plan (zgc/monitorPlan, as `zgc guards --plan` prints it).
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

async function show(title, text) {
  const doc = await vscode.workspace.openTextDocument({ content: text, language: 'plaintext' });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  vscode.window.setStatusBarMessage(title, 5000);
}

function activeZg() {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.document.languageId !== 'zg') {
    vscode.window.showErrorMessage('Open a .zg file first.');
    return null;
  }
  return ed;
}

async function activate(context) {
  const command = vscode.workspace.getConfiguration('zg').get('server.path') || 'zgc';
  client = new LanguageClient(
    'zg',
    'ZipperGen (zgc lsp)',
    { command, args: ['lsp'] },
    { documentSelector: [{ scheme: 'file', language: 'zg' }, { scheme: 'untitled', language: 'zg' }] },
  );
  await client.start();
  context.subscriptions.push(
    vscode.commands.registerCommand('zg.showProjection', async () => {
      const ed = activeZg();
      if (!ed) return;
      // the word under the cursor is the lifeline's name, when it is one
      const range = ed.document.getWordRangeAtPosition(ed.selection.active);
      const word = range ? ed.document.getText(range) : '';
      const lifeline = await vscode.window.showInputBox({ prompt: 'Lifeline (empty: all)', value: word });
      if (lifeline === undefined) return;
      try {
        const r = await client.sendRequest('zgc/projection', {
          textDocument: { uri: ed.document.uri.toString() },
          ...(lifeline ? { lifeline } : {}),
        });
        await show(`projection of ${lifeline || 'every lifeline'} (${r.workflow})`, r.text);
      } catch (e) {
        vscode.window.showErrorMessage(e.message);
      }
    }),
    vscode.commands.registerCommand('zg.showMonitorPlan', async () => {
      const ed = activeZg();
      if (!ed) return;
      try {
        const r = await client.sendRequest('zgc/monitorPlan', { textDocument: { uri: ed.document.uri.toString() } });
        await show(`monitor plan (${r.workflow})`, `${r.guards}\n${r.plan}`);
      } catch (e) {
        vscode.window.showErrorMessage(e.message);
      }
    }),
  );
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
