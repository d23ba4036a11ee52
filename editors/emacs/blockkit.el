;;; blockkit.el --- blockkit lsp in Emacs through eglot  -*- lexical-binding: t -*-
;; Tried on Emacs 28.2 with eglot 1.9 (Debian 12's emacs-nox and elpa-eglot).
;; Put it in your init file, or load it from there: (load "/path/to/blockkit.el")

(require 'eglot)

;; Manifests get a mode of their own, so that eglot starts blockkit for them and not for
;; every JSON or JavaScript file.
(define-derived-mode blockkit-manifest-mode js-mode "Block manifest"
  "Major mode for block.manifest.json files, checked by blockkit lsp.")
(add-to-list 'auto-mode-alist '("\\.manifest\\.json\\'" . blockkit-manifest-mode))

(add-to-list 'eglot-server-programs
             '(blockkit-manifest-mode
               . ("blockkit" "lsp" :initializationOptions (:tier "unverified"))))

(defun blockkit-fix-all ()
  "Apply what `blockkit fix' would write to this manifest (nothing when nothing is to fix)."
  (interactive)
  (when (eglot-managed-p)
    (condition-case nil
        (eglot-code-actions (point-min) (point-max) "source.fixAll.blockkit" t)
      ;; eglot signals an error when the server offers no fix-all: nothing to fix.
      (error nil))))

(add-hook 'blockkit-manifest-mode-hook
          (lambda ()
            (eglot-ensure)
            ;; Fix all on save. eglot asks and waits for the answer, then saves.
            (add-hook 'before-save-hook #'blockkit-fix-all nil t)))

(provide 'blockkit)
;;; blockkit.el ends here
